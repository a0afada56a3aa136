"""Reads for the jobs pages: metric series, logs, queue lengths, worker health, config diffs."""

from __future__ import annotations

import os
from collections import defaultdict

from django.conf import settings
from django.utils import timezone

from webapp.jobs.models import ACTIVE_STATUSES, Job, JobLog, JobStatus, Metric, WorkerHeartbeat

QUEUES = ("cpu", "gpu")


def job_metric_series(job_ids: list[int]) -> dict[int, dict[str, list[list[float]]]]:
    """{job id: {metric name: [[step, value], ...]}} in step order."""
    series: dict[int, dict[str, list[list[float]]]] = {j: defaultdict(list) for j in job_ids}
    for job_id, name, step, value in (
        Metric.objects.filter(job_id__in=job_ids)
        .order_by("job_id", "name", "step", "id")
        .values_list("job_id", "name", "step", "value")
    ):
        series[job_id][name].append([step, value])
    return {j: dict(s) for j, s in series.items()}


def job_metric_names(job: Job) -> list[str]:
    """The names of a job's metrics, sorted (one DISTINCT query, not its every point)."""
    return list(
        Metric.objects.filter(job=job).order_by("name").values_list("name", flat=True).distinct()
    )


def job_log_tail(job: Job, n: int = 50) -> list[JobLog]:
    return list(reversed(JobLog.objects.filter(job=job).order_by("-id")[:n]))


def queue_lengths() -> dict[str, int | None]:
    """Messages waiting per queue (None when the broker cannot be asked)."""
    url = settings.CELERY_BROKER_URL
    try:
        if url.startswith("filesystem://"):
            folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]
            names = os.listdir(folder)
            return {q: sum(1 for n in names if n.partition(".")[2] == f"{q}.msg") for q in QUEUES}
        if url.startswith(("redis://", "rediss://")):
            import redis

            client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
            return {q: int(client.llen(q)) for q in QUEUES}
    except Exception:  # monitoring must never break the page
        pass
    return {q: None for q in QUEUES}


def worker_state(last_seen, active_job_id, stale) -> str:
    """A worker's state: "busy" (a recent heartbeat and a job), "idle" (a recent heartbeat, no
    job: job workers beat between jobs too) or "silent" (no heartbeat since `stale`: stopped, or
    unreachable)."""
    if last_seen < stale:
        return "silent"
    return "busy" if active_job_id else "idle"


def heartbeat_timing() -> dict:
    """How often a job worker beats and after how long without a beat it reads as silent."""
    return {
        "heartbeat_seconds": settings.JOB_HEARTBEAT_SECONDS,
        "stale_seconds": settings.JOB_STALE_SECONDS,
    }


def workers_health() -> list[dict]:
    stale = timezone.now() - timezone.timedelta(seconds=settings.JOB_STALE_SECONDS)
    rows = []
    for w in WorkerHeartbeat.objects.all()[:50]:
        state = worker_state(w.last_seen, w.active_job_id, stale)
        rows.append(
            {
                "hostname": w.hostname,
                "queues": w.queues,
                "active_job_id": w.active_job_id,
                "last_seen": w.last_seen,
                "state": state,
                "alive": state != "silent",
            }
        )
    return rows


def config_diff(jobs: list[Job]) -> list[dict]:
    """Rows of (key, value per job, differs?) over the union of config keys."""
    keys = sorted({k for job in jobs for k in job.config})
    rows = []
    for key in keys:
        values = [job.config.get(key, "—") for job in jobs]
        rows.append({"key": key, "values": values, "differs": len({repr(v) for v in values}) > 1})
    return rows


def jobs_list(kind: str | None = None, status: str | None = None, limit: int = 100):
    jobs = Job.objects.select_related("created_by").order_by("-created_at")
    if kind:
        jobs = jobs.filter(kind=kind)
    if status:
        jobs = jobs.filter(status=status)
    return jobs[:limit]


def jobs_any_active() -> bool:
    """Whether any job is queued, running or stopping (the dashboard's runs refresh while so)."""
    return Job.objects.filter(status__in=ACTIVE_STATUSES).exists()


def evaluation_partial(job: Job) -> dict | None:
    """A stopped or failed evaluation's metrics over the games it stored ({"n_games": 0} when it
    stored none); None for any other job. They count nowhere else: the leaderboards take finished
    evaluations only."""
    from webapp.jobs.kinds.evaluation import evaluation_results  # loads the game engine

    if job.kind != "evaluation" or job.status not in (JobStatus.STOPPED, JobStatus.FAILED):
        return None
    return evaluation_results(job.pk, k=None)  # k: the fewest samples any word got so far


def jobs_results(jobs: list[Job]) -> dict[int, tuple[dict, bool]]:
    """Each job's results as the compare page shows them: (results, partial), a stopped or failed
    evaluation's over the games it stored."""
    out = {}
    for job in jobs:
        partial = evaluation_partial(job)
        out[job.pk] = (partial, True) if partial is not None else (job.result or {}, False)
    return out
