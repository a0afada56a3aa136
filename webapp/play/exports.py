"""Games, turns and whole trajectories (one row per game, its turns nested) as JSONL and Parquet
with fixed schemas (`webapp.core.exports`). JSON fields (`config`, `reward`, `top_candidates`)
are JSON text in Parquet and nested in JSONL; times are UTC timestamps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from webapp.core.exports import ChunkedWriter, model_columns
from webapp.play.models import Game, Turn
from webapp.play.selectors import games_filtered

CHUNK = 1000  # games per chunk: memory holds one chunk's games and turns
GAME_FIELDS = (
    "id",
    "public_id",
    "mode",
    "secret",
    "word_list__name",
    "word_list__version",
    "guesser__name",
    "judge__name",
    "player__username",
    "job_id",
    "sample_index",
    "seed",
    "outcome",
    "n_turns",
    "initial_belief",
    "config",
    "created_at",
    "finished_at",
)
TURN_FIELDS = (
    "game_id",
    "index",
    "question",
    "verdict",
    "feedback",
    "judge_raw",
    "reward",
    "total_reward",
    "belief",
    "delta_belief",
    "advantage",
    "candidates_left",
    "top_candidates",
    "latency_ms",
    "judged_by__username",
)


@lru_cache(maxsize=1)
def schemas() -> dict:
    """{"games", "turns", "trajectories"}: pyarrow schemas of GAME_FIELDS and TURN_FIELDS, typed
    by the models' fields (webapp.core.exports.model_columns)."""
    import pyarrow as pa

    game = model_columns(Game, GAME_FIELDS)
    turn = model_columns(Turn, TURN_FIELDS[1:])  # nested in a trajectory: no game_id
    return {
        "games": pa.schema(game),
        "turns": pa.schema([("game_id", pa.int64()), *turn]),
        "trajectories": pa.schema([*game, ("turns", pa.list_(pa.struct(turn)))]),
    }


def games_selection(
    *,
    job: int = 0,
    word_list: str = "",
    guesser: str = "",
    judge: str = "",
    mode: str = "",
    finished_only: bool = False,
):
    """Games by job, word list, guesser, judge and mode (each empty = any), oldest first."""
    games = games_filtered(
        Game.objects.all(),
        job=job or None,
        word_list=word_list,
        guesser=guesser,
        judge=judge,
        mode=mode,
    )
    if finished_only:
        games = games.exclude(outcome="playing")
    return games.order_by("id")


def _named(row: dict) -> dict:
    return {key.replace("__", "_"): value for key, value in row.items()}


def export_games(
    ids: Sequence[int],
    out_dir: Path,
    formats: Sequence[str],
    *,
    chunk: int = CHUNK,
    on_chunk: Callable[[int], None] | None = None,
) -> tuple[int, list[Path]]:
    """Write games.*, turns.* and trajectories.* for the games `ids` into `out_dir`, a chunk at a
    time; `on_chunk(games done)` after each (it may raise to stop). (turns written, files)."""
    writer = ChunkedWriter(out_dir, schemas(), formats)
    n_turns = 0
    try:
        for name in ("games", "turns", "trajectories"):
            writer.write(name, [])  # every file exists, even for no games
        for offset in range(0, len(ids), chunk):
            part = ids[offset : offset + chunk]
            games = [
                _named(g)
                for g in Game.objects.filter(id__in=part).order_by("id").values(*GAME_FIELDS)
            ]
            turns = [
                _named(t)
                for t in Turn.objects.filter(game_id__in=part)
                .order_by("game_id", "index")
                .values(*TURN_FIELDS)
            ]
            by_game: dict[int, list[dict]] = {}
            for turn in turns:
                by_game.setdefault(turn["game_id"], []).append(
                    {k: v for k, v in turn.items() if k != "game_id"}
                )
            writer.write("games", games)
            writer.write("turns", turns)
            writer.write("trajectories", [{**g, "turns": by_game.get(g["id"], [])} for g in games])
            n_turns += len(turns)
            if on_chunk:
                on_chunk(offset + len(part))
    finally:
        files = writer.close()
    return n_turns, files
