"""How runners report progress: the same `run(config, reporter)` serves the CLI and Celery.

The web app supplies a database-backed reporter; the CLI uses `ConsoleReporter`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Protocol


class StopRequested(Exception):
    """Raised by runners (or `Reporter.check_stop`) when a cooperative stop was asked for."""


class Reporter(Protocol):
    output_dir: Path

    def progress(self, fraction: float, message: str = "") -> None: ...
    def metrics(self, step: int, values: dict[str, float]) -> None: ...
    def log(self, message: str, level: str = "info") -> None: ...
    def checkpoint(
        self,
        step: int,
        path: str | Path,
        *,
        metrics: dict | None = None,
        config: dict | None = None,
        is_adapter: bool = False,
    ) -> None: ...
    def artifact(
        self, kind: str, name: str, path: str | Path, meta: dict | None = None
    ) -> None: ...
    def should_stop(self) -> bool: ...
    def last_checkpoint(self) -> dict | None: ...


class ConsoleReporter:
    """Prints JSON lines; used by command-line runs and tests of runners."""

    def __init__(
        self, output_dir: str | Path, stream=None, stop_after_progress: float | None = None
    ):
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.stream = stream or sys.stderr
        self.stop_after_progress = stop_after_progress
        self.records: list[dict[str, Any]] = []
        self._progress = 0.0
        self._checkpoints: list[dict] = []

    def _emit(self, **record: Any) -> None:
        record["t"] = round(time.time(), 3)
        self.records.append(record)
        print(json.dumps(record, default=str), file=self.stream)

    def progress(self, fraction: float, message: str = "") -> None:
        self._progress = float(fraction)
        self._emit(event="progress", fraction=round(fraction, 4), message=message)

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self._emit(event="metrics", step=step, **{k: float(v) for k, v in values.items()})

    def log(self, message: str, level: str = "info") -> None:
        self._emit(event="log", level=level, message=message)

    def checkpoint(self, step, path, *, metrics=None, config=None, is_adapter=False) -> None:
        record = {
            "step": step,
            "path": str(path),
            "metrics": metrics or {},
            "config": config or {},
            "is_adapter": is_adapter,
        }
        self._checkpoints.append(record)
        self._emit(event="checkpoint", **record)

    def artifact(self, kind, name, path, meta=None) -> None:
        self._emit(event="artifact", kind=kind, name=name, path=str(path), meta=meta or {})

    def should_stop(self) -> bool:
        return self.stop_after_progress is not None and self._progress >= self.stop_after_progress

    def last_checkpoint(self) -> dict | None:
        return self._checkpoints[-1] if self._checkpoints else None
