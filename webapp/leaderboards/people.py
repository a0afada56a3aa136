"""The people's board (``humans``): person-asks games played under the strict win rule (as people
play since issue 22; older reference-rule games, which a question listing many words could win, do
not count), one ranking per word list, since words differ in difficulty from list to list (a win
rate is compared only with others on the same list, as the models boards do).

On each list, by signed-in player: win rate with a Wilson interval, mean questions in won games;
ranked by the interval's lower end so one lucky game does not top the board. Guests (no account)
are pooled into one unranked "guests" row at the end of the list. Every row names its list
(``word_list``, ``word_list_key``); the meta lists the lists, most played first.
"""

from __future__ import annotations

from django.db.models import Count, Max, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from games.metrics import wilson_interval
from webapp.play.models import Game, GameMode, GameOutcome

PEOPLE_RULE = "strict"  # the rule people play under (webapp.play.services)
FINISHED = (GameOutcome.WON, GameOutcome.LOST)
CHOSEN_WORD = "a chosen word"  # games from no word list
_WON = Q(outcome=GameOutcome.WON)


def people_games() -> QuerySet[Game]:
    """Person-asks games played under the people's rule, but for those whose secret the player
    chose (a researcher may): they knew the word."""
    games = Game.objects.filter(mode=GameMode.HUMAN_GUESSER, config__win_rule=PEOPLE_RULE)
    return games.filter(Q(state__secret_source__isnull=True) | ~Q(state__secret_source="chosen"))


def word_list_key(word_list_id: int | None) -> str:
    return f"wl:{word_list_id or '-'}"


def _rate(x: float) -> float:
    return round(float(x), 6)


def _row(p: dict) -> dict:
    lo, hi = wilson_interval(p["wins"], p["games"])
    return {
        "player_id": p["player_id"],
        "name": p["player__username"] if p["player_id"] else "guests",
        "kind": "user" if p["player_id"] else "guests",
        "word_list": p["word_list__name"] or CHOSEN_WORD,
        "word_list_version": p["word_list__version"],
        "word_list_key": word_list_key(p["word_list_id"]),
        "games": p["games"],
        "wins": p["wins"],
        "win_rate": _rate(p["wins"] / p["games"]),
        "win_rate_lo": _rate(lo),
        "win_rate_hi": _rate(hi),
        "mean_questions_solved": _rate(p["won_turns"] / p["wins"]) if p["wins"] else None,
        "abandoned": p["abandoned"],
        "last_played_at": p["last"].isoformat() if p["last"] else None,
        "rank": None,
    }


def humans_board() -> tuple[list[dict], dict]:
    per_player = (
        people_games()
        .filter(outcome__in=(*FINISHED, GameOutcome.ABANDONED))
        .values(
            "word_list_id", "word_list__name", "word_list__version", "player_id", "player__username"
        )
        .annotate(
            games=Count("id", filter=Q(outcome__in=FINISHED)),
            wins=Count("id", filter=_WON),
            abandoned=Count("id", filter=Q(outcome=GameOutcome.ABANDONED)),
            won_turns=Sum("n_turns", filter=_WON),
            last=Max(Coalesce("finished_at", "created_at")),
        )
        .order_by()
    )
    by_list: dict[str, list[dict]] = {}
    for p in per_player:
        if p["games"]:
            row = _row(p)
            by_list.setdefault(row["word_list_key"], []).append(row)
    lists = sorted(
        by_list.values(), key=lambda rows: (-sum(r["games"] for r in rows), rows[0]["word_list"])
    )
    board = [row for rows in lists for row in _ranked(rows)]
    meta = {
        "players": len({r["player_id"] for r in board if r["kind"] == "user"}),
        "games": sum(r["games"] for r in board),
        "guest_games": sum(r["games"] for r in board if r["kind"] == "guests"),
        "ranked_by": "lower end of the 95% Wilson interval of the win rate, within each word list",
        "win_rule": PEOPLE_RULE,
        "word_lists": [
            {
                "key": rows[0]["word_list_key"],
                "name": rows[0]["word_list"],
                "version": rows[0]["word_list_version"],
                "games": sum(r["games"] for r in rows),
                "players": sum(1 for r in rows if r["kind"] == "user"),
            }
            for rows in lists
        ],
    }
    return board, meta


def _ranked(rows: list[dict]) -> list[dict]:
    """One list's rows: players ranked, then the pooled guests."""
    players = sorted(
        (r for r in rows if r["kind"] == "user"),
        key=lambda r: (-r["win_rate_lo"], -r["win_rate"], -r["games"], r["name"]),
    )
    for rank, row in enumerate(players, 1):
        row["rank"] = rank
    return players + [r for r in rows if r["kind"] == "guests"]
