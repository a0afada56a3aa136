"""Play every (word, sample) pair not yet stored, in lock-step batches, and report as it goes.

Resumable: the caller passes the pairs already stored, and each batch is stored before the
next starts, so a re-run after a dead worker neither repeats nor loses games.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from games.guessers.base import Guesser
from games.judges.base import Judge
from games.metrics import summarise
from games.registry import precision_record
from games.types import GameConfig, Trajectory
from training.common.data import play_pairs
from training.common.models import cpu_threads
from training.evaluation.config import EvaluationConfig
from training.reporting import Reporter, StopRequested

StoreFn = Callable[[list[Trajectory], list[int]], None]


def plan(words: Sequence[str], samples: int, done: set[tuple[str, int]]) -> list[tuple[str, int]]:
    """Sample-major order, so a partial run already covers every word once."""
    return [(w, s) for s in range(samples) for w in words if (w, s) not in done]


def run(
    config: EvaluationConfig,
    reporter: Reporter,
    *,
    guesser: Guesser,
    judge: Judge,
    words: Sequence[str],
    store: StoreFn,
    done: set[tuple[str, int]] | None = None,
) -> dict:
    """The games played now and how long they took, and the precision the models ran at. torch
    uses every core this process may run on meanwhile (workers start with one thread)."""
    with cpu_threads(0):
        progress = _play(config, reporter, guesser, judge, words, store, set(done or ()))
    precision = precision_record(config.precision, guesser=guesser, judge=judge)
    return {**progress, "precision": precision}


def _play(config, reporter, guesser, judge, words, store, done) -> dict:
    todo = plan(words, config.samples, done)
    total = len(words) * config.samples
    game_config = GameConfig(max_turns=config.max_turns, win_rule=config.win_rule)
    reporter.log(f"{len(todo)} of {total} games to play ({len(done)} already stored)")
    played: list[Trajectory] = []
    start = time.perf_counter()
    for offset in range(0, len(todo), config.batch_size):
        if reporter.should_stop():
            raise StopRequested()
        batch = todo[offset : offset + config.batch_size]
        trajectories = play_pairs(guesser, judge, batch, seed=config.seed, config=game_config)
        store(trajectories, [s for _, s in batch])
        played += trajectories
        finished = len(done) + offset + len(batch)
        running = summarise(played, k=1)
        elapsed = time.perf_counter() - start
        reporter.metrics(
            finished,
            {
                "eval/success_rate": running.success_rate,
                "eval/strict_success_rate": running.strict_success_rate,
                "eval/mean_turns": running.mean_turns,
                "eval/invalid_rate": running.invalid_rate,
                "eval/games_per_second": len(played) / max(elapsed, 1e-9),
            },
        )
        reporter.progress(finished / max(total, 1), f"{finished}/{total} games")
    return {"games_played_now": len(played), "seconds": round(time.perf_counter() - start, 2)}
