"""Shared by the knowledge, SFT, DPO and training-job tests: one small tiny model per session,
hand-made turns and trajectories, and a reporter that stops on request."""

from __future__ import annotations

from pathlib import Path

from games.engine import reward_parts
from games.rules import VERDICT_FEEDBACK
from games.types import GameConfig, Outcome, Trajectory, Turn, Verdict
from training.reporting import ConsoleReporter

TINY = {"hidden": 32, "intermediate": 64, "layers": 2, "heads": 4, "kv_heads": 2, "seed": 0}


def tiny_model(tmp_path_factory) -> Path:
    """Built once per test session (every test directory's fixture reuses the folder)."""
    from training.tiny import build_tiny_model

    out = tmp_path_factory.getbasetemp() / "training-tiny-model"
    if not (out / "model.safetensors").is_file():
        build_tiny_model(out, **TINY)
    return out


def turn(index: int, question: str, verdict: Verdict) -> Turn:
    return Turn(
        index=index,
        question=question,
        verdict=verdict,
        feedback=VERDICT_FEEDBACK[verdict],
        reward=reward_parts(verdict, GameConfig()),
    )


def trajectory(secret: str, steps: list[tuple[str, Verdict]], seed: int = 0) -> Trajectory:
    turns = [turn(i, q, v) for i, (q, v) in enumerate(steps)]
    won = bool(turns) and turns[-1].verdict is Verdict.FINISHED
    return Trajectory(
        secret=secret, seed=seed, turns=turns, outcome=Outcome.WON if won else Outcome.LOST
    )


class StoppingReporter(ConsoleReporter):
    """Asks to stop once `stop_at` should_stop() calls were made (None: never)."""

    def __init__(self, output_dir, stop_at: int | None = None):
        import io

        super().__init__(output_dir, stream=io.StringIO())
        self.stop_at, self.calls = stop_at, 0

    def should_stop(self) -> bool:
        self.calls += 1
        return self.stop_at is not None and self.calls >= self.stop_at

    def metric_rows(self) -> list[dict]:
        return [r for r in self.records if r["event"] == "metrics"]
