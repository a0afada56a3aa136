"""Job lifecycle: submit, run (in the worker), cancel, resume, retry, and the reaper of dead workers."""

from __future__ import annotations

import logging
import socket
import threading
import traceback
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from training.reporting import StopRequested
from webapp.core.exceptions import ApplicationError
from webapp.jobs import registry
from webapp.jobs.models import Job, JobLog, JobStatus, WorkerHeartbeat
from webapp.jobs.reporter import DatabaseReporter

log = logging.getLogger(__name__)
MAX_REQUEUES = 2
MAX_TRACE = 8000


def _enqueue(job: Job) -> None:
    from workers.tasks import job_run_task

    job_id, queue, task_id = job.pk, job.queue, job.task_id
    transaction.on_commit(lambda: job_run_task.apply_async(kwargs={"job_id": job_id}, queue=queue, task_id=task_id))


def _move(job_id: int, from_statuses, to: str, *, where: dict | None = None, **fields) -> bool:
    """Conditional status change: true if this caller made it (safe under races); `where` adds
    conditions the row must still meet (e.g. a heartbeat still older than the cutoff)."""
    for status in from_statuses:
        Job(pk=job_id, status=status).check_transition(to)
    rows = Job.objects.filter(pk=job_id, status__in=list(from_statuses), **(where or {}))
    return rows.update(status=to, **fields) == 1


@transaction.atomic
def job_submit(*, kind: str, params: dict | None, user=None, retry_of: Job | None = None) -> Job:
    """Validate the config (refusing bad input before anything is queued), store and enqueue."""
    job_kind = registry.get_kind(kind)
    config = registry.build_config(job_kind, params)
    job_kind.check_references(config)
    job = Job(
        kind=kind, config=registry.config_to_dict(config), queue=job_kind.queue_for(config), created_by=user,
        task_id=str(uuid.uuid4()), retry_of=retry_of, attempt=(retry_of.attempt + 1) if retry_of else 1,
    )
    job.full_clean()
    job.save()
    _enqueue(job)
    return job


@transaction.atomic
def job_cancel(*, job: Job) -> Job:
    if _move(job.pk, [JobStatus.QUEUED], JobStatus.STOPPED, finished_at=timezone.now()):
        JobLog.objects.create(job=job, message="cancelled before it started")
    elif not _move(job.pk, [JobStatus.RUNNING], JobStatus.STOPPING):
        job.refresh_from_db()
        if job.status != JobStatus.STOPPING:
            raise ApplicationError(f"job {job.pk} is {job.status}; only queued or running jobs can be cancelled", status=409)
    job.refresh_from_db()
    return job


@transaction.atomic
def job_resume(*, job: Job) -> Job:
    """Put a stopped or failed job back in the queue; its runner continues from the last checkpoint."""
    if not _move(job.pk, [JobStatus.STOPPED, JobStatus.FAILED], JobStatus.QUEUED,
                 error="", task_id=str(uuid.uuid4()), finished_at=None):
        raise ApplicationError(f"job {job.pk} is {job.status}; only stopped or failed jobs can be resumed", status=409)
    job.refresh_from_db()
    JobLog.objects.create(job=job, message="resumed")
    _enqueue(job)
    return job


def job_retry(*, job: Job, user=None) -> Job:
    """A new attempt with the same config, linked to the old one."""
    if job.is_active:
        raise ApplicationError(f"job {job.pk} is still {job.status}", status=409)
    return job_submit(kind=job.kind, params=job.config, user=user or job.created_by, retry_of=job)


class _Heartbeat(threading.Thread):
    def __init__(self, job_id: int, worker: str, queue: str):
        super().__init__(daemon=True, name=f"heartbeat-{job_id}")
        self.job_id, self.worker, self.queue = job_id, worker, queue
        self.stopped = threading.Event()

    def beat(self) -> None:
        now = timezone.now()
        Job.objects.filter(pk=self.job_id).update(heartbeat_at=now)
        WorkerHeartbeat.objects.update_or_create(
            hostname=self.worker, defaults={"last_seen": now, "queues": self.queue, "active_job_id": self.job_id}
        )

    def run(self) -> None:
        try:
            while not self.stopped.wait(settings.JOB_HEARTBEAT_SECONDS):
                try:
                    self.beat()
                except Exception:  # a missed beat is not fatal; the reaper tolerates a few
                    log.exception("heartbeat failed for job %s", self.job_id)
        finally:
            connection.close()


def worker_name() -> str:
    return f"{socket.gethostname()}:{threading.get_native_id()}"


def job_run(*, job_id: int, worker: str | None = None) -> str:
    """Run one job in this worker. Only a queued job is claimed: redelivered messages are no-ops."""
    worker = worker or worker_name()
    now = timezone.now()
    if not _move(job_id, [JobStatus.QUEUED], JobStatus.RUNNING, worker=worker, started_at=now, heartbeat_at=now):
        status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
        log.info("job %s not claimed (status %s)", job_id, status)
        return f"skipped ({status})"
    job = Job.objects.get(pk=job_id)
    heartbeat = _Heartbeat(job_id, worker, job.queue)
    heartbeat.beat()
    heartbeat.start()
    reporter = DatabaseReporter(job)
    try:
        kind = registry.get_kind(job.kind)
        config = registry.build_config(kind, job.config)
        reporter.log(f"started on {worker} (attempt {job.attempt})")
        result = kind.runner_fn()(config, reporter)
    except StopRequested:
        if _move(job_id, [JobStatus.STOPPING], JobStatus.STOPPED, finished_at=timezone.now()):
            reporter.log("stopped on request")
            return JobStatus.STOPPED
        _move(job_id, [JobStatus.RUNNING], JobStatus.FAILED, finished_at=timezone.now(),
              error="the runner stopped without a stop request")
        return JobStatus.FAILED
    except BaseException as exc:  # includes Celery's SoftTimeLimitExceeded
        close_old_connections()
        message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        if isinstance(exc, ValidationError):
            message = f"invalid config: {exc.messages}"
        _move(job_id, [JobStatus.RUNNING, JobStatus.STOPPING], JobStatus.FAILED, error=message[:5000],
              finished_at=timezone.now())
        reporter.log(traceback.format_exc()[-MAX_TRACE:], level="error")
        if not isinstance(exc, Exception):
            raise
        return JobStatus.FAILED
    finally:
        heartbeat.stopped.set()
        heartbeat.join(timeout=5)
        WorkerHeartbeat.objects.filter(hostname=worker).update(active_job_id=None, last_seen=timezone.now())
    _move(job_id, [JobStatus.RUNNING, JobStatus.STOPPING], JobStatus.FINISHED, result=_jsonable(result),
          progress=1.0, finished_at=timezone.now())
    reporter.log("finished")
    return JobStatus.FINISHED



def _jsonable(result) -> dict:
    import dataclasses
    import json

    if dataclasses.is_dataclass(result):
        result = dataclasses.asdict(result)
    if not isinstance(result, dict):
        result = {"value": result}
    return json.loads(json.dumps(result, default=str))


def jobs_reap_stale() -> dict[str, list[int]]:
    """Jobs whose worker stopped sending heartbeats (killed, even by SIGKILL) are re-queued or failed."""
    cutoff = timezone.now() - timezone.timedelta(seconds=settings.JOB_STALE_SECONDS)
    report: dict[str, list[int]] = {"requeued": [], "failed": [], "stopped": []}
    still_silent = {"heartbeat_at__lt": cutoff}  # a heartbeat after the select spares the job
    stale = Job.objects.filter(status__in=[JobStatus.RUNNING, JobStatus.STOPPING], **still_silent)
    for job in stale:
        silence = f"no heartbeat from {job.worker or 'its worker'} since {job.heartbeat_at:%H:%M:%S}"
        if job.status == JobStatus.STOPPING:
            if _move(job.pk, [JobStatus.STOPPING], JobStatus.STOPPED, where=still_silent,
                     finished_at=timezone.now()):
                JobLog.objects.create(job=job, level="warning", message=f"worker lost while stopping ({silence})")
                report["stopped"].append(job.pk)
        elif job.requeues < MAX_REQUEUES:
            if _move(job.pk, [JobStatus.RUNNING], JobStatus.QUEUED, where=still_silent,
                     requeues=job.requeues + 1, task_id=str(uuid.uuid4()), worker=""):
                job.refresh_from_db()
                JobLog.objects.create(job=job, level="warning", message=f"worker lost ({silence}); re-queued")
                with transaction.atomic():
                    _enqueue(job)
                report["requeued"].append(job.pk)
        elif _move(job.pk, [JobStatus.RUNNING], JobStatus.FAILED, where=still_silent,
                   finished_at=timezone.now(), error=f"worker lost ({silence}) after {job.requeues} re-queues"):
            JobLog.objects.create(job=job, level="error",
                                  message=f"worker lost ({silence}) after {job.requeues} re-queues; failed")
            report["failed"].append(job.pk)
    return report
