"""A Celery worker process of this project as `make run` starts it, and waiting on a condition: the
harness the fault benchmark and the worker tests (tests/workers) share."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any


def celery_worker_command(queues: str, hostname: str, *options: str) -> list[str]:
    """The command line of a Celery worker consuming `queues` under `hostname`, with `options`
    for its pool, concurrency and schedule."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "workers.celery:app",
        "worker",
        "-Q",
        queues,
        *options,
        "--without-gossip",
        "--without-mingle",
        "-l",
        "INFO",
        "--hostname",
        hostname,
    ]


def wait_for(
    predicate: Callable[[], Any],
    timeout: float = 60.0,
    what: str = "condition",
    interval: float = 0.2,
) -> Any:
    """The first true value of `predicate()`, polled every `interval` seconds; TimeoutError after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
