"""Job lifecycle: submit, run (in the worker), cancel, resume, retry, the reaper of dead workers and
the sweep that re-publishes queued jobs whose message never reached (or was lost by) the broker.

A worker claims a queued job with a compare-and-set that also counts `Job.claim` up; that count is
its fencing token: its status moves, heartbeats and reporter writes all hold only under it.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
import uuid
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import (
    InterfaceError,
    OperationalError,
    close_old_connections,
    transaction,
)
from django.db.models import Q
from django.utils import timezone

from training.reporting import StopRequested
from webapp.core import sending
from webapp.core.exceptions import ApplicationError
from webapp.jobs import registry
from webapp.jobs.heartbeats import Heartbeat, worker_name
from webapp.jobs.models import Job, JobLog, JobStatus, WorkerHeartbeat
from webapp.jobs.processes import RanksFailed, processes_of, run_in_processes
from webapp.jobs.reporter import DatabaseReporter, Fence, JobFenced, jsonable

log = logging.getLogger(__name__)
MAX_REQUEUES = 2
MAX_TRACE = 8000
DatabaseConnectionLost = (OperationalError, InterfaceError)
PUBLISH_GRACE_SECONDS = 10  # a queued job younger than this may still be being published
REPUBLISH_BATCH = 200


class JobNotPublished(ApplicationError):
    """The job is stored but its message did not reach the broker; the sweep sends it again."""

    def __init__(self, job_id: int, reason: str):
        super().__init__(
            f"job {job_id} is saved but the job queue is unreachable ({reason}); "
            "it will be queued again automatically once the queue is back",
            extra={"id": job_id},
            status=503,
        )
        self.job_id = job_id


def _publish(job_id: int, queue: str, task_id: str) -> None:
    """Hand the job's message to the broker and note when; JobNotPublished if the broker refuses."""
    try:
        sending.send_task(sending.JOB_RUN, kwargs={"job_id": job_id}, queue=queue, task_id=task_id)
    except Exception as exc:  # kombu, redis-py and the file system raise unrelated types
        log.warning("job %s: publish to queue %s failed: %s", job_id, queue, exc)
        raise JobNotPublished(job_id, type(exc).__name__) from exc
    Job.objects.filter(pk=job_id, task_id=task_id).update(published_at=timezone.now())


def _enqueue(job: Job) -> dict:
    """Publish after commit (a worker must find the row). A failure is logged and left for the
    sweep; the returned outcome lets a caller that owns the transaction report it (503)."""
    job_id, queue, task_id = job.pk, job.queue, job.task_id
    outcome: dict = {"error": None}

    def publish() -> None:
        try:
            _publish(job_id, queue, task_id)
        except JobNotPublished as exc:
            outcome["error"] = exc

    transaction.on_commit(publish)
    return outcome


def _raise_if_unpublished(outcome: dict) -> None:
    """After the caller's transaction: JobNotPublished if the publish already ran and failed (in
    an outer transaction, e.g. the admin's, it runs later and only the sweep will notice)."""
    if outcome["error"] is not None:
        raise outcome["error"]


def _move(job_id: int, from_statuses, to: str, *, where: dict | None = None, **fields) -> bool:
    """Conditional status change: true if this caller made it (safe under races); `where` adds
    conditions the row must still meet (e.g. a heartbeat still older than the cutoff)."""
    for status in from_statuses:
        Job(pk=job_id, status=status).check_transition(to)
    rows = Job.objects.filter(pk=job_id, status__in=list(from_statuses), **(where or {}))
    return rows.update(status=to, **fields) == 1


def job_submit(*, kind: str, params: dict | None, user=None, retry_of: Job | None = None) -> Job:
    """Validate the config (refusing bad input before anything is queued), store and enqueue.
    Raises JobNotPublished (503, with the id) after the commit if the broker is unreachable."""
    job_kind = registry.get_kind(kind)
    config = registry.build_config(job_kind, params)
    job_kind.check_references(config)
    job = Job(
        kind=kind,
        config=registry.config_to_dict(config),
        queue=job_kind.queue_for(config),
        created_by=user,
        task_id=str(uuid.uuid4()),
        retry_of=retry_of,
        attempt=(retry_of.attempt + 1) if retry_of else 1,
    )
    job.full_clean()
    with transaction.atomic():
        job.save()
        published = _enqueue(job)
    _raise_if_unpublished(published)
    return job


@transaction.atomic
def job_cancel(*, job: Job) -> Job:
    if _move(job.pk, [JobStatus.QUEUED], JobStatus.STOPPED, finished_at=timezone.now()):
        JobLog.objects.create(job=job, message="cancelled before it started")
    elif not _move(job.pk, [JobStatus.RUNNING], JobStatus.STOPPING):
        job.refresh_from_db()
        if job.status != JobStatus.STOPPING:
            raise ApplicationError(
                f"job {job.pk} is {job.status}; only queued or running jobs can be cancelled",
                status=409,
            )
    job.refresh_from_db()
    return job


def job_resume(*, job: Job) -> Job:
    """Put a stopped or failed job back in the queue; its runner continues from its checkpoint."""
    with transaction.atomic():
        if not _move(
            job.pk,
            [JobStatus.STOPPED, JobStatus.FAILED],
            JobStatus.QUEUED,
            error="",
            task_id=str(uuid.uuid4()),
            finished_at=None,
            published_at=None,
        ):
            raise ApplicationError(
                f"job {job.pk} is {job.status}; only stopped or failed jobs can be resumed",
                status=409,
            )
        job.refresh_from_db()
        JobLog.objects.create(job=job, message="resumed")
        published = _enqueue(job)
    _raise_if_unpublished(published)
    return job


def job_retry(*, job: Job, user=None) -> Job:
    """A new attempt with the same config, linked to the old one."""
    if job.is_active:
        raise ApplicationError(f"job {job.pk} is still {job.status}", status=409)
    try:
        return job_submit(
            kind=job.kind, params=job.config, user=user or job.created_by, retry_of=job
        )
    except ValidationError as exc:  # the kind or its config changed since the job ran
        problems = "; ".join(exc.messages)
        raise ApplicationError(
            f"job {job.pk} cannot be retried: its stored config no longer validates "
            f"({problems}); launch a new job instead"
        ) from exc


def _claim(job_id: int, worker: str) -> int | None:
    """queued → running with the claim counted up (compare-and-set): the new claim, or None if
    another worker claimed it first or it is not queued (a redelivered or re-published message)."""
    current = Job.objects.filter(pk=job_id).values_list("claim", flat=True).first()
    if current is None:
        return None
    now = timezone.now()
    claimed = _move(
        job_id,
        [JobStatus.QUEUED],
        JobStatus.RUNNING,
        where={"claim": current},
        claim=current + 1,
        worker=worker,
        started_at=now,
        heartbeat_at=now,
    )
    return current + 1 if claimed else None


def _requeue_after_connection_loss(job: Job, claim: int, exc: BaseException) -> bool:
    """A database that went away mid-run (a restart, a fail-over) is not the job's fault: put it
    back in the queue under a new task id (its runner resumes), up to MAX_REQUEUES times."""
    if job.requeues >= MAX_REQUEUES:
        return False
    task_id = str(uuid.uuid4())
    if not _move(
        job.pk,
        [JobStatus.RUNNING],
        JobStatus.QUEUED,
        where={"claim": claim},
        requeues=job.requeues + 1,
        task_id=task_id,
        worker="",
        published_at=None,
    ):
        return False
    JobLog.objects.create(
        job_id=job.pk,
        level="warning",
        message=f"database connection lost ({type(exc).__name__}); re-queued",
    )
    with contextlib.suppress(JobNotPublished):  # the sweep sends it once the broker is back
        _publish(job.pk, job.queue, task_id)
    return True


def _superseded(job_id: int, claim: int) -> str:
    log.warning(
        "job %s: claim %s was superseded (re-queued and claimed again, or moved on); "
        "this worker stops without writing",
        job_id,
        claim,
    )
    return "superseded"


def job_run(*, job_id: int, worker: str | None = None) -> str:
    """Run one job in this worker. Only a queued job is claimed: redelivered messages are no-ops.
    Every write holds only under this claim; a superseded worker returns "superseded" quietly."""
    worker = worker or worker_name()
    claim = _claim(job_id, worker)
    if claim is None:
        status = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
        log.info("job %s not claimed (status %s)", job_id, status)
        return f"skipped ({status})"
    job = Job.objects.get(pk=job_id)
    fence = Fence(job_id, claim)
    heartbeat = Heartbeat(fence, worker, job.queue)
    heartbeat.beat()
    heartbeat.start()
    reporter = DatabaseReporter(job, fence=fence)
    try:
        kind = registry.get_kind(job.kind)
        config = registry.build_config(kind, job.config)
        processes = processes_of(config)
        reporter.log(
            f"started on {worker} (attempt {job.attempt}, claim {claim})"
            + (f" in {processes} processes" if processes > 1 else "")
        )
        if processes > 1:
            result = run_in_processes(job, claim, processes, heartbeat.stopped.is_set)
        else:
            result = kind.runner_fn()(config, reporter)
    except JobFenced:
        return _superseded(job_id, claim)
    except StopRequested:
        return _stopped(fence)
    except BaseException as exc:  # includes Celery's SoftTimeLimitExceeded
        status = _failed(job, fence, exc)
        if not isinstance(exc, Exception):
            raise
        return status
    finally:
        heartbeat.stopped.set()
        heartbeat.join(timeout=5)
        WorkerHeartbeat.objects.filter(hostname=worker).update(
            active_job_id=None, last_seen=timezone.now()
        )
    return _finished(fence, result)


def _stopped(fence: Fence) -> str:
    """The runner stopped: stopped if a stop was requested, failed if not (under this claim)."""
    job_id, mine = fence.job_id, fence.where
    if _move(
        job_id, [JobStatus.STOPPING], JobStatus.STOPPED, where=mine, finished_at=timezone.now()
    ):
        JobLog.objects.create(job_id=job_id, message="stopped on request")
        return JobStatus.STOPPED
    if _move(
        job_id,
        [JobStatus.RUNNING],
        JobStatus.FAILED,
        where=mine,
        finished_at=timezone.now(),
        error="the runner stopped without a stop request",
    ):
        return JobStatus.FAILED
    return _superseded(job_id, fence.claim)


def _failed(job: Job, fence: Fence, exc: BaseException) -> str:
    """The runner raised `exc` (called while it is being handled): superseded, re-queued after a
    lost database connection, or failed with its traceback logged. The caller re-raises what is
    not an Exception once the job is marked failed."""
    job_id, claim = fence.job_id, fence.claim
    close_old_connections()
    # superseded: e.g. a unique key the new claim wrote first
    if isinstance(exc, Exception) and not fence.holds():
        return _superseded(job_id, claim)
    if isinstance(exc, DatabaseConnectionLost) and _requeue_after_connection_loss(job, claim, exc):
        return JobStatus.QUEUED
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    if isinstance(exc, ValidationError):
        message = f"invalid config: {exc.messages}"
    elif isinstance(exc, RanksFailed):  # which rank and what ended it
        message = str(exc)
    if _move(
        job_id,
        [JobStatus.RUNNING, JobStatus.STOPPING],
        JobStatus.FAILED,
        where=fence.where,
        error=message[:5000],
        finished_at=timezone.now(),
    ):
        # a rank's own traceback (RanksFailed) rather than the worker's
        details = getattr(exc, "details", "") or traceback.format_exc()
        JobLog.objects.create(job_id=job_id, level="error", message=details[-MAX_TRACE:])
    return JobStatus.FAILED


def _finished(fence: Fence, result) -> str:
    """Store the runner's result and mark the job finished (under this claim)."""
    job_id = fence.job_id
    if not _move(
        job_id,
        [JobStatus.RUNNING, JobStatus.STOPPING],
        JobStatus.FINISHED,
        where=fence.where,
        result=jsonable(result),
        progress=1.0,
        finished_at=timezone.now(),
    ):
        return _superseded(job_id, fence.claim)
    JobLog.objects.create(job_id=job_id, message="finished")
    return JobStatus.FINISHED


def jobs_reap_stale() -> dict[str, list[int]]:
    """Jobs whose worker stopped sending heartbeats (even after SIGKILL): re-queued or failed."""
    cutoff = timezone.now() - timezone.timedelta(seconds=settings.JOB_STALE_SECONDS)
    report: dict[str, list[int]] = {"requeued": [], "failed": [], "stopped": []}
    still_silent = {"heartbeat_at__lt": cutoff}  # a heartbeat after the select spares the job
    stale = Job.objects.filter(status__in=[JobStatus.RUNNING, JobStatus.STOPPING], **still_silent)
    for job in stale:
        silence = (
            f"no heartbeat from {job.worker or 'its worker'} since {job.heartbeat_at:%H:%M:%S}"
        )
        if job.status == JobStatus.STOPPING:
            outcome, new_status = "stopped", JobStatus.STOPPED
            fields: dict = {"finished_at": timezone.now()}
            level, message = "warning", f"worker lost while stopping ({silence})"
        elif job.requeues < MAX_REQUEUES:
            outcome, new_status = "requeued", JobStatus.QUEUED
            fields = {
                "requeues": job.requeues + 1,
                "task_id": str(uuid.uuid4()),
                "worker": "",
                "published_at": None,
            }
            level, message = "warning", f"worker lost ({silence}); re-queued"
        else:
            outcome, new_status = "failed", JobStatus.FAILED
            error = f"worker lost ({silence}) after {job.requeues} re-queues"
            fields = {"finished_at": timezone.now(), "error": error}
            level, message = "error", f"{error}; failed"
        if not _move(job.pk, [job.status], new_status, where=still_silent, **fields):
            continue
        JobLog.objects.create(job=job, level=level, message=message)
        report[outcome].append(job.pk)
        if new_status == JobStatus.QUEUED:
            job.refresh_from_db()
            with contextlib.suppress(JobNotPublished):  # the sweep sends it later
                _publish(job.pk, job.queue, job.task_id)
    return report


def broker_holds(queue: str, task_id: str) -> bool | None:
    """Whether the broker still holds the task's message, waiting or delivered but not acked
    (None: this broker cannot be asked). Redis: the queue list and kombu's `unacked` hash;
    the file-system broker: the message files of the queue."""
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://")):
        import redis

        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        needle = task_id.encode()
        waiting = client.lrange(queue, 0, -1)
        return any(needle in m for m in waiting) or any(
            needle in m for m in client.hvals("unacked")
        )
    if url.startswith("filesystem://"):
        from pathlib import Path

        folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        for path in folder.glob(f"*.{queue}.msg"):
            try:
                if task_id in path.read_text(errors="replace"):
                    return True
            except FileNotFoundError:  # consumed while we looked
                continue
        return False
    return None


def jobs_republish_lost() -> list[int]:
    """Queued jobs whose message never reached the broker (a failed publish), or whose message the
    broker no longer holds after JOB_REPUBLISH_SECONDS (e.g. Redis restarted without persistence),
    are published again under the same task id. Safe with the claim: a job whose message turns
    out to exist twice is still claimed, and run, once."""
    now = timezone.now()
    unpublished = Q(
        published_at__isnull=True, created_at__lt=now - timedelta(seconds=PUBLISH_GRACE_SECONDS)
    )
    old = Q(published_at__lt=now - timedelta(seconds=settings.JOB_REPUBLISH_SECONDS))
    republished = []
    for job in Job.objects.filter(unpublished | old, status=JobStatus.QUEUED).order_by("pk")[
        :REPUBLISH_BATCH
    ]:
        try:
            if job.published_at is not None and broker_holds(job.queue, job.task_id) is not False:
                continue  # there (or unknowable, and it was sent): a worker will take it
        except Exception as exc:  # the broker is down: nothing to do until it is back
            log.warning("republish sweep: cannot ask the broker (%s)", exc)
            break
        # take the right to publish this job's message with a compare-and-set, so one sweep sends it
        if not Job.objects.filter(
            pk=job.pk, status=JobStatus.QUEUED, task_id=job.task_id, published_at=job.published_at
        ).update(published_at=now):
            continue
        try:
            _publish(job.pk, job.queue, job.task_id)
        except JobNotPublished:
            Job.objects.filter(pk=job.pk, published_at=now).update(published_at=None)
            break
        JobLog.objects.create(
            job=job, level="warning", message="queued job's message was missing; published again"
        )
        republished.append(job.pk)
    return republished
