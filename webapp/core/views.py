"""The home page and the favicon."""

from django.shortcuts import render
from django.templatetags.static import static
from django.views.generic import RedirectView

from webapp.catalog.selectors import word_list_summaries
from webapp.labelling.selectors import games_not_blinded
from webapp.leaderboards.selectors import leaderboard_latest, people_list_rows
from webapp.leaderboards.services import HUMANS, MODELS
from webapp.play.models import GameStatus
from webapp.play.selectors import game_list
from webapp.play.visitors import visitor_from_request

RECENT_GAMES = 5  # the newest finished people's games on the home page
BOARD_TOP = 3  # models and people shown from each leaderboard


def _board_top(board: str) -> list[dict]:
    """The first ranked rows of a stored leaderboard (people's pooled guests row is unranked).
    People are ranked per word list: only the most played list's rows (the meta lists it first)."""
    snapshot = leaderboard_latest(board)
    if board == HUMANS:
        _, rows = people_list_rows(snapshot)
    else:
        rows = snapshot.rows if snapshot else []
    return [row for row in rows if row.get("rank")][:BOARD_TOP]


def home(request):
    finished = game_list(show="people").filter(status=GameStatus.FINISHED)
    # games hidden while their secret is labelled answer 404: not linked either
    recent = games_not_blinded(finished, visitor_from_request(request))[:RECENT_GAMES]
    return render(
        request,
        "core/home.html",
        {
            "word_lists": word_list_summaries(),
            "recent_games": recent,
            "top_models": _board_top(MODELS),
            "top_people": _board_top(HUMANS),
        },
    )


class FaviconRedirect(RedirectView):
    """/favicon.ico, which browsers ask for on their own, points at the SVG icon."""

    permanent = False

    def get_redirect_url(self, *args, **kwargs):
        return static("favicon.svg")
