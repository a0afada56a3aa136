"""Leaderboards: compute the boards from finished games and store them as snapshots.

Like FastChat's monitor: games are the append-only record, ``games.metrics`` / ``games.rating``
do the arithmetic, ``leaderboards_refresh`` (run by the beat task ``leaderboards.refresh``) writes
one ``LeaderboardSnapshot`` per board and key, and views only read the newest snapshot.

Boards
- ``models`` (one per word list | judge | max turns | win rule, and the ``models_index`` of their
  keys): model-vs-model games by guesser (``webapp.leaderboards.models_board``).
- ``humans``: people's win rates, one ranking per word list (``webapp.leaderboards.people``).
- ``arena``: Bradley–Terry ratings of guessers from people's Arena battles (webapp.arena.board).
- ``ability``: one Rasch fit over people and guesser models with words as items, so people and
  models are ranked on one scale (``webapp.leaderboards.ability``).

History: a refresh whose numbers equal the newest snapshot's only stamps ``meta.checked_at`` on
it instead of adding a row, so the table grows when results change, not every five minutes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from webapp.arena.board import ARENA, arena_board, arena_words_refresh
from webapp.core import sending
from webapp.leaderboards.ability import ability_board
from webapp.leaderboards.models import LeaderboardSnapshot, RefreshPending
from webapp.leaderboards.models_board import models_boards
from webapp.leaderboards.people import humans_board

MODELS, MODELS_INDEX, HUMANS, ABILITY = "models", "models_index", "humans", "ability"
BOARDS = (MODELS, HUMANS, ABILITY)


# --- storing -----------------------------------------------------------------------------------


def _json(value: Any) -> Any:
    return json.loads(
        json.dumps(value)
    )  # what a JSONField gives back, for comparing with the stored snapshot


def _snapshot_store(*, board: str, key: str, rows: list, meta: dict, now: datetime) -> bool:
    """Store a snapshot unless the newest one has the same numbers; true if a row was added."""
    rows, meta = _json(rows), _json(meta)
    checked = {"checked_at": now.isoformat()}
    latest = (
        LeaderboardSnapshot.objects.filter(board=board, key=key)
        .order_by("-computed_at", "-pk")
        .first()
    )
    if (
        latest is not None
        and latest.rows == rows
        and {k: v for k, v in latest.meta.items() if k != "checked_at"} == meta
    ):
        latest.meta = {**latest.meta, **checked}
        latest.save(update_fields=["meta"])
        return False
    snapshot = LeaderboardSnapshot(board=board, key=key, rows=rows, meta={**meta, **checked})
    snapshot.full_clean(exclude=["rows"])  # an empty board is a valid snapshot
    snapshot.save()
    return True


def leaderboards_refresh(
    *, now: datetime | None = None, finishing_jobs: Iterable[int] = ()
) -> dict:
    """Compute every board from the games and store the snapshots (the beat task calls this).
    `finishing_jobs`: evaluation jobs whose runner calls this just before the job is marked
    finished, so their games count already."""
    now = now or timezone.now()
    index, boards = models_boards(finishing_jobs)
    humans = humans_board()
    ability = ability_board(finishing_jobs)
    arena = arena_board()
    written = 0
    with transaction.atomic():
        for key, (rows, meta) in boards.items():
            written += _snapshot_store(board=MODELS, key=key, rows=rows, meta=meta, now=now)
        written += _snapshot_store(
            board=MODELS_INDEX, key="", rows=index, meta={"keys": len(index)}, now=now
        )
        written += _snapshot_store(board=HUMANS, key="", rows=humans[0], meta=humans[1], now=now)
        written += _snapshot_store(board=ABILITY, key="", rows=ability[0], meta=ability[1], now=now)
        written += _snapshot_store(board=ARENA, key="", rows=arena[0], meta=arena[1], now=now)
    arena_words_refresh()  # a new "arena words" version when people chose new words
    return {
        "models_keys": len(boards),
        "humans_rows": len(humans[0]),
        "ability_rows": len(ability[0]),
        "arena_rows": len(arena[0]),
        "snapshots_written": written,
        "computed_at": now.isoformat(),
    }


# One pending refresh at a time: "Recompute now" marks it; the worker clears the mark as it starts,
# so a click while one runs queues one more, a click while one waits queues nothing. A mark this old
# is taken to be a lost message and queued again.
REFRESH_KEY = "all-boards"
REFRESH_PENDING_SECONDS = 600


def leaderboards_refresh_queue(*, now: datetime | None = None) -> bool:
    """Queue a refresh once the current transaction commits ("Recompute now"), unless one is
    already waiting. Returns whether this call queued one."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=REFRESH_PENDING_SECONDS)
    taken_over = RefreshPending.objects.filter(key=REFRESH_KEY, queued_at__lt=stale).update(
        queued_at=now
    )
    if not taken_over:
        try:
            with transaction.atomic():
                RefreshPending.objects.create(key=REFRESH_KEY, queued_at=now)
        except IntegrityError:
            return False  # one is waiting already
    transaction.on_commit(lambda: sending.send_task(sending.LEADERBOARDS_REFRESH))
    return True


def leaderboards_refresh_pending() -> dict:
    """The queued task: clear the pending mark first (later clicks queue again), then refresh."""
    RefreshPending.objects.filter(key=REFRESH_KEY).delete()
    return leaderboards_refresh()
