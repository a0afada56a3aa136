"""`python -m bench.exports [--games N] [--turns T]`: the export job's code path over N stored
games (alternating human and model games, T turns each) in a throwaway copy of the configured
database (DATABASE_URL: Postgres for the number that matters; created and dropped like the test
database), each format timed, and memory checked to stay flat: the peak RSS after exporting a
quarter of the games and after exporting all of them. Prints JSON (and writes
bench/results/exports.json with --save)."""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from bench import RESULTS_DIR, report

RESULTS = RESULTS_DIR / "exports.json"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def current_rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def store_games(n: int, turns: int, batch: int = 1000) -> None:
    """n finished games in batches (human ones with a player and no guesser, model ones with a
    guesser, beliefs and candidates and no player), `turns` turns each."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from webapp.catalog.models import ModelSpec
    from webapp.catalog.services import seed_model_specs
    from webapp.play.models import Game, GameMode, Turn

    seed_model_specs()
    judge, guesser = ModelSpec.objects.get(name="kb"), ModelSpec.objects.get(name="infogain")
    player = get_user_model().objects.create_user("bench-player", password="x")
    now = timezone.now()
    for start in range(0, n, batch):
        games = []
        for i in range(start, min(start + batch, n)):
            human = i % 2 == 0
            games.append(
                Game(
                    mode=GameMode.HUMAN_GUESSER if human else GameMode.MODEL_VS_MODEL,
                    secret=f"word{i % 997}",
                    judge=judge,
                    guesser=None if human else guesser,
                    player=player if human else None,
                    outcome="won" if i % 3 else "lost",
                    status="finished",
                    n_turns=turns,
                    seed=i,
                    initial_belief=None if human else -6.5,
                    config={"max_turns": 20, "win_rule": "reference"},
                    finished_at=now,
                )
            )
        games = Game.objects.bulk_create(games)
        Turn.objects.bulk_create(
            [
                Turn(
                    game=g,
                    index=t,
                    question=f"Is it question number {t} about things?",
                    verdict="no",
                    judge_raw="kb: no",
                    reward={"turn": -0.05},
                    total_reward=-0.05,
                    belief=None if g.player_id else -6.0 + t,
                    delta_belief=None if g.player_id else 0.5,
                    candidates_left=None if g.player_id else 400 // (t + 1),
                    top_candidates=None if g.player_id else [["cat", 0.3], ["dog", 0.2]],
                )
                for g in games
                for t in range(turns)
            ],
            batch_size=5000,
        )


def export_all(ids: list[int], formats: list[str]) -> dict:
    from webapp.play.exports import export_games

    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        n_turns, files = export_games(ids, Path(folder), formats)
        seconds = time.perf_counter() - began
        size = sum(p.stat().st_size for p in files)
    return {
        "games": len(ids),
        "turns": n_turns,
        "seconds": round(seconds, 2),
        "games_per_second": round(len(ids) / seconds),
        "bytes": size,
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "rss_mb": round(current_rss_mb(), 1),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--save", action="store_true", help="write bench/results/exports.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.test")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    from webapp.play.models import Game

    old = setup_databases(verbosity=0, interactive=False)
    try:
        began = time.perf_counter()
        store_games(args.games, args.turns)
        stored = time.perf_counter() - began
        ids = list(Game.objects.order_by("id").values_list("id", flat=True))
        rss_before = peak_rss_mb()
        quarter = export_all(ids[: len(ids) // 4], ["jsonl", "parquet"])
        runs = {fmt: export_all(ids, [fmt]) for fmt in ("jsonl", "parquet")}
        both = export_all(ids, ["jsonl", "parquet"])
        result = {
            "database": connection.vendor,
            "games": args.games,
            "turns_per_game": args.turns,
            "store_seconds": round(stored, 1),
            "peak_rss_mb_before_export": round(rss_before, 1),
            "quarter_both_formats": quarter,
            "jsonl": runs["jsonl"],
            "parquet": runs["parquet"],
            "both_formats": both,
            "peak_rss_growth_quarter_to_all_mb": round(
                both["peak_rss_mb"] - quarter["peak_rss_mb"], 1
            ),
        }
    finally:
        teardown_databases(old, verbosity=0)
    report(result, RESULTS if args.save else None)
    return result


if __name__ == "__main__":
    main()
