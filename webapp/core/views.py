"""The home page, the favicon and the built docs site."""

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.views.decorators.http import require_GET
from django.views.generic import RedirectView
from django.views.static import serve

from webapp.catalog.selectors import word_list_summaries
from webapp.core import docs_site
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


# MkDocs Material's pages carry small inline scripts (the page's base path, the colour scheme):
# allowed on the docs pages only, which hold nothing but the built site's own files.
@require_GET
@csp_update({"script-src": [UNSAFE_INLINE]})
def docs(request, path: str = ""):
    """A file of the built docs site (settings.DOCS_SITE_DIR), a folder's index.html for a
    folder; the 404 page says how to build the site where it is not built."""
    if docs_site.wants_slash(path):
        return redirect(request.path + "/", permanent=False)
    found = docs_site.docs_page(path)
    if found is None:
        missing = not docs_site.docs_site_built()
        return render(request, "404.html", {"docs_missing": missing}, status=404)
    root, name = found
    return serve(request, name, document_root=root)
