"""A training.reporting.Reporter that writes to the database."""

from __future__ import annotations

import time
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from webapp.jobs.models import Artifact, Checkpoint, Job, JobLog, JobStatus, Metric

STOP_POLL_SECONDS = 1.0
MAX_LOG_CHARS = 10_000


def job_output_dir(job_id: int) -> Path:
    path = Path(settings.CHECKPOINTS_DIR) / f"job-{job_id}"
    path.mkdir(parents=True, exist_ok=True)
    return path


class DatabaseReporter:
    def __init__(self, job: Job):
        self.job_id = job.pk
        self.output_dir = job_output_dir(job.pk)
        self._last_poll = 0.0
        self._stop = False

    def progress(self, fraction: float, message: str = "") -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        Job.objects.filter(pk=self.job_id).update(
            progress=fraction, progress_message=message[:300], heartbeat_at=timezone.now()
        )

    def metrics(self, step: int, values: dict[str, float]) -> None:
        Metric.objects.bulk_create(
            [Metric(job_id=self.job_id, step=step, name=name[:100], value=float(v)) for name, v in values.items()]
        )

    def log(self, message: str, level: str = "info") -> None:
        JobLog.objects.create(job_id=self.job_id, level=level[:10], message=str(message)[:MAX_LOG_CHARS])

    def checkpoint(self, step, path, *, metrics=None, config=None, is_adapter=False) -> Checkpoint:
        return Checkpoint.objects.create(
            job_id=self.job_id, step=step, path=str(path), metrics=metrics or {}, config=config or {},
            is_adapter=is_adapter,
        )

    def artifact(self, kind, name, path, meta=None) -> Artifact:
        path = Path(path)
        size = path.stat().st_size if path.exists() and path.is_file() else 0
        return Artifact.objects.create(
            job_id=self.job_id, kind=kind, name=name, path=str(path), size_bytes=size, meta=meta or {}
        )

    def should_stop(self) -> bool:
        now = time.monotonic()
        if not self._stop and now - self._last_poll >= STOP_POLL_SECONDS:
            self._last_poll = now
            status = Job.objects.filter(pk=self.job_id).values_list("status", flat=True).first()
            self._stop = status in (JobStatus.STOPPING, None)
        return self._stop

    def last_checkpoint(self) -> dict | None:
        ckpt = Checkpoint.objects.filter(job_id=self.job_id).order_by("-step", "-id").first()
        if ckpt is None:
            return None
        return {"step": ckpt.step, "path": ckpt.path, "metrics": ckpt.metrics, "config": ckpt.config,
                "is_adapter": ckpt.is_adapter}
