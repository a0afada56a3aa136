"""A training.reporting.Reporter that writes to the database, fenced by the worker's claim.

Every write from a running job (progress, metrics, logs, checkpoints, artifacts, games stored
through `fenced()`) goes through only while the job is still running under the claim this worker
made. A worker that was paused, re-queued by the reaper and superseded by another claim gets
`JobFenced` instead and stops without touching the job.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from webapp.jobs.models import Artifact, Checkpoint, Job, JobLog, JobStatus, Metric

STOP_POLL_SECONDS = 1.0
MAX_LOG_CHARS = 10_000
OWNED_STATUSES = (JobStatus.RUNNING, JobStatus.STOPPING)


def json_safe(value):
    """`value` as stored JSON: NaN and ±Infinity (a diverged run's numbers) as null, which JSON
    columns accept, other objects as their str()."""
    return json.loads(json.dumps(value, default=str), parse_constant=lambda _: None)


def jsonable(result) -> dict:
    """A runner's result as the job's stored JSON."""
    if dataclasses.is_dataclass(result):
        result = dataclasses.asdict(result)
    if not isinstance(result, dict):
        result = {"value": result}
    return json_safe(result)


class JobFenced(Exception):
    """This worker's claim on the job is superseded (or the job left running): stop quietly."""


def job_output_path(job_id: int) -> Path:
    """Where a job writes its checkpoints and files (funnel.json, ...)."""
    return Path(settings.CHECKPOINTS_DIR) / f"job-{job_id}"


def job_output_dir(job_id: int) -> Path:
    """job_output_path, created."""
    path = job_output_path(job_id)
    path.mkdir(parents=True, exist_ok=True)
    return path


class Fence:
    """A worker's claim on a job (`claim` None: unfenced, for runs outside a worker's claim)."""

    def __init__(self, job_id: int, claim: int | None):
        self.job_id, self.claim = job_id, claim

    @property
    def where(self) -> dict:
        return {} if self.claim is None else {"claim": self.claim}

    def _rows(self):
        rows = Job.objects.filter(pk=self.job_id)
        return (
            rows if self.claim is None else rows.filter(claim=self.claim, status__in=OWNED_STATUSES)
        )

    def holds(self) -> bool:
        return self._rows().exists()

    def check(self) -> None:
        if not self.holds():
            raise JobFenced(f"job {self.job_id}: claim {self.claim} was superseded")

    def update(self, **fields) -> None:
        """A conditional UPDATE of the job row: WHERE claim = this claim AND still running."""
        if self._rows().update(**fields) != 1:
            raise JobFenced(f"job {self.job_id}: claim {self.claim} was superseded")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A transaction that first takes the job row under this claim (so neither the reaper nor a
        new claim can move the job until it commits), then runs the caller's writes."""
        nested = connection.in_atomic_block  # inside a caller's transaction (tests wrap each)
        with transaction.atomic():
            previous = None
            if (
                connection.vendor == "postgresql"
            ):  # a paused worker must not hold the row lock for long
                seconds = int(settings.JOB_FENCE_IDLE_SECONDS)
                with connection.cursor() as cursor:
                    if nested:
                        cursor.execute("SHOW idle_in_transaction_session_timeout")
                        previous = cursor.fetchone()[0]
                    cursor.execute(f"SET LOCAL idle_in_transaction_session_timeout = '{seconds}s'")
            self.update(heartbeat_at=timezone.now())
            yield
            if previous is not None:
                # SET LOCAL outlives a released savepoint: the enclosing transaction gets its own
                # timeout back rather than the fence's (a rolled-back one undoes it by itself)
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT set_config('idle_in_transaction_session_timeout', %s, true)",
                        [previous],
                    )


class DatabaseReporter:
    def __init__(self, job: Job, fence: Fence | None = None):
        self.job_id = job.pk
        self.fence = fence or Fence(job.pk, None)
        self.output_dir = job_output_dir(job.pk)
        self._last_poll = 0.0
        self._stop = False

    def fenced(self):
        """A transaction for the caller's own writes (e.g. games), only under this claim."""
        return self.fence.transaction()

    def ensure_owner(self) -> None:
        """Raise JobFenced unless this worker still holds the job (checked before writing files)."""
        self.fence.check()

    def progress(self, fraction: float, message: str = "") -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        self.fence.update(
            progress=fraction, progress_message=message[:300], heartbeat_at=timezone.now()
        )

    def metrics(self, step: int, values: dict[str, float]) -> None:
        with self.fenced():
            Metric.objects.bulk_create(
                [
                    Metric(job_id=self.job_id, step=step, name=name[:100], value=float(v))
                    for name, v in values.items()
                    if math.isfinite(float(v))  # a NaN loss is no point of a curve
                ]
            )

    def log(self, message: str, level: str = "info") -> None:
        with self.fenced():
            JobLog.objects.create(
                job_id=self.job_id, level=level[:10], message=str(message)[:MAX_LOG_CHARS]
            )

    def checkpoint(self, step, path, *, metrics=None, config=None, is_adapter=False) -> Checkpoint:
        with self.fenced():
            return Checkpoint.objects.create(
                job_id=self.job_id,
                step=step,
                path=str(path),
                metrics=json_safe(metrics or {}),
                config=json_safe(config or {}),
                is_adapter=is_adapter,
            )

    def artifact(self, kind, name, path, meta=None) -> Artifact:
        path = Path(path)
        size = path.stat().st_size if path.exists() and path.is_file() else 0
        with self.fenced():
            return Artifact.objects.create(
                job_id=self.job_id,
                kind=kind,
                name=name,
                path=str(path),
                size_bytes=size,
                meta=json_safe(meta or {}),
            )

    def should_stop(self) -> bool:
        """True once a stop was asked for; JobFenced once another claim superseded this one."""
        now = time.monotonic()
        if not self._stop and now - self._last_poll >= STOP_POLL_SECONDS:
            self._last_poll = now
            row = Job.objects.filter(pk=self.job_id).values_list("status", "claim").first()
            if row is None:
                self._stop = True
            elif self.fence.claim is not None and (
                row[1] != self.fence.claim or row[0] not in OWNED_STATUSES
            ):
                raise JobFenced(f"job {self.job_id}: claim {self.fence.claim} was superseded")
            else:
                self._stop = row[0] == JobStatus.STOPPING
        return self._stop

    def last_checkpoint(self) -> dict | None:
        ckpt = Checkpoint.objects.filter(job_id=self.job_id).order_by("-step", "-id").first()
        if ckpt is None:
            return None
        return {
            "step": ckpt.step,
            "path": ckpt.path,
            "metrics": ckpt.metrics,
            "config": ckpt.config,
            "is_adapter": ckpt.is_adapter,
        }
