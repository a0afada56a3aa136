"""The Arena board (a leaderboard snapshot, board "arena") and the "arena words" word list,
computed from the battles that count (webapp.arena.selectors.counted_battles) and those of people
not excluded (people_battles) by the housekeeping refresh (and the words also by the researchers'
"Update arena words" button), never when a board is read."""

from __future__ import annotations

from games.arena import MIN_BATTLES, ratings
from webapp.arena.selectors import counted_battles, people_battles
from webapp.catalog.models import WordList
from webapp.catalog.selectors import word_list_latest
from webapp.catalog.services import word_list_version_create

ARENA = "arena"  # the board's name among the leaderboard snapshots
ARENA_WORDS = "arena words"  # the word list of the words people chose


def arena_board() -> tuple[list[dict], dict]:
    """(rows, meta): every guesser's Bradley–Terry rating with its 95% bootstrap interval, best
    first, over the finished battles of people not excluded."""
    battles = list(counted_battles().values_list("guesser_a__name", "guesser_b__name", "outcome"))
    rows = [
        {"rank": k + 1, **r.to_dict()}
        for k, r in enumerate(ratings(battles, min_battles=MIN_BATTLES))
    ]
    return rows, {"battles": len(battles), "min_battles": MIN_BATTLES}


def arena_words_refresh(*, created_by=None) -> WordList | None:
    """A new version of "arena words" when people's finished battles hold words its newest version
    lacks (None otherwise). Words the knowledge base does not know are kept, marked in_kb false;
    words drawn from a word list are left out (nobody chose them); a word neither guesser could
    name is in (the battle counts nowhere, but the person chose it)."""
    found: dict[str, dict] = {}
    chosen = people_battles().filter(word_source="kept").order_by("id")
    for word, in_kb in chosen.values_list("word", "word_in_kb"):
        entry = found.setdefault(
            word, {"word": word, "stats": {"in_kb": bool(in_kb), "battles": 0}}
        )
        entry["stats"]["battles"] += 1
    if not found:
        return None
    latest = word_list_latest(ARENA_WORDS)
    known = set(latest.entries.values_list("word__text", flat=True)) if latest else set()
    if set(found) <= known:
        return None
    return word_list_version_create(
        name=ARENA_WORDS,
        entries=sorted(found.values(), key=lambda e: e["word"]),
        source="arena battles",
        description="The words people chose in Arena battles (in_kb: the knowledge base knows it).",
        provenance={"battles": sum(e["stats"]["battles"] for e in found.values())},
        created_by=created_by,
    )
