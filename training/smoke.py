"""A smoke job: proves web → broker → worker → database, and exercises cancel and heartbeats; in
several processes (RanksSmokeConfig) the worker's multi-process launch too (every rank runs the
loop, rank 0 reports)."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field

from training.common.config import check_between
from training.reporting import Reporter, StopRequested


@dataclass(frozen=True)
class SmokeConfig:
    message: str = field(default="hello", metadata={"help": "echoed back in the result"})
    steps: int = field(
        default=1, metadata={"min": 1, "max": 10_000, "help": "how many steps to run"}
    )
    seconds_per_step: float = field(
        default=0.0,
        metadata={"min": 0, "max": 600, "help": "sleep per step (to test cancel and heartbeats)"},
    )

    def __post_init__(self) -> None:
        check_between(self, "steps")
        check_between(self, "seconds_per_step")
        if len(self.message) > 1000:
            raise ValueError("message must be at most 1000 characters")


@dataclass(frozen=True)
class RanksSmokeConfig(SmokeConfig):
    """The smoke job in several processes (the `smoke_ranks` kind): checks a worker's multi-process
    launch, a failing rank's report and cancellation."""

    processes: int = field(
        default=2,
        metadata={"min": 1, "max": 64, "help": "processes to run in (checks the worker's launch)"},
    )
    fail_on_rank: int = field(
        default=-1,
        metadata={
            "min": -1,
            "max": 63,
            "help": "this rank raises at the last step (checks a failing rank's report); -1 = none",
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_between(self, "processes")
        check_between(self, "fail_on_rank")


def run(config: SmokeConfig, reporter: Reporter) -> dict:
    done = (reporter.last_checkpoint() or {}).get("step", 0)
    for step in range(done + 1, config.steps + 1):
        if reporter.should_stop():
            raise StopRequested()
        time.sleep(config.seconds_per_step)
        failing = getattr(config, "fail_on_rank", -1)
        if step == config.steps and int(os.environ.get("RANK", "0")) == failing:
            raise RuntimeError(f"smoke: rank {failing} fails at step {step}, as asked")
        reporter.metrics(step, {"smoke/step": step})
        reporter.progress(step / config.steps, f"step {step}/{config.steps}")
        if config.seconds_per_step:
            reporter.checkpoint(step, reporter.output_dir / f"step-{step}", metrics={"step": step})
    return {
        "echo": config.message,
        "hostname": socket.gethostname(),
        "steps": config.steps,
        "resumed_from": done,
    }
