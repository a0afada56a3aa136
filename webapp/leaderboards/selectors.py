"""Reads of the stored leaderboard snapshots (views and the API read only these)."""

from __future__ import annotations

from webapp.leaderboards.models import LeaderboardSnapshot
from webapp.leaderboards.services import MODELS, MODELS_INDEX


def _newest(board: str, key: str) -> LeaderboardSnapshot | None:
    return (
        LeaderboardSnapshot.objects.filter(board=board, key=key)
        .order_by("-computed_at", "-pk")
        .first()
    )


def leaderboard_model_keys() -> list[dict]:
    """The models boards that exist (word list / judge / max turns), the default first."""
    index = _newest(MODELS_INDEX, "")
    return list(index.rows) if index else []


def leaderboard_latest(board: str, key: str | None = None) -> LeaderboardSnapshot | None:
    """The newest snapshot of a board. For ``models`` without a key: the default key's board
    (the most played 20-turn setting); other boards have the single key ""."""
    if board == MODELS and not key:
        keys = leaderboard_model_keys()
        if not keys:
            return None
        key = keys[0]["key"]
    return _newest(board, key or "")


def people_list_rows(
    humans: LeaderboardSnapshot | None, key: str | None = None
) -> tuple[str | None, list[dict]]:
    """The People board of one word list, (its key, its rows): `key` when the snapshot has that
    list, else the most played list (the meta lists it first)."""
    keys = [wl.get("key") for wl in (humans.meta.get("word_lists", []) if humans else [])]
    key = key if key in keys else (keys[0] if keys else None)
    return key, [r for r in (humans.rows if humans else []) if r.get("word_list_key") == key]
