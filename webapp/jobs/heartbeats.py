"""Job workers' heartbeats: a running job's (its claim's fence, every JOB_HEARTBEAT_SECONDS) and
a job worker's between jobs, so the jobs page tells a busy, an idle and a silent worker apart and
the reaper finds jobs whose worker went silent."""

from __future__ import annotations

import logging
import socket
import threading

from django.conf import settings
from django.db import connection
from django.utils import timezone

from webapp.jobs.models import WorkerHeartbeat
from webapp.jobs.reporter import Fence, JobFenced

log = logging.getLogger(__name__)


class Heartbeat(threading.Thread):
    """A running job's heartbeat: its claim's fence, this worker and queue, every
    JOB_HEARTBEAT_SECONDS (a superseded claim stops it)."""

    def __init__(self, fence: Fence, worker: str, queue: str):
        super().__init__(daemon=True, name=f"heartbeat-{fence.job_id}")
        self.fence, self.worker, self.queue = fence, worker, queue
        self.stopped = threading.Event()

    def beat(self) -> None:
        """Mark the job alive (only under this worker's claim) and the worker alive."""
        now = timezone.now()
        try:
            self.fence.update(heartbeat_at=now)
        except JobFenced:
            self.stopped.set()  # superseded: the runner stops at its next write or stop check
            log.warning(
                "job %s: claim %s superseded; heartbeats stop", self.fence.job_id, self.fence.claim
            )
        job_id = None if self.stopped.is_set() else self.fence.job_id
        WorkerHeartbeat.objects.update_or_create(
            hostname=self.worker,
            defaults={"last_seen": now, "queues": self.queue, "active_job_id": job_id},
        )

    def run(self) -> None:
        try:
            while not self.stopped.wait(settings.JOB_HEARTBEAT_SECONDS):
                try:
                    self.beat()
                except Exception:  # a missed beat is not fatal; the reaper tolerates a few
                    log.exception("heartbeat failed for job %s", self.fence.job_id)
                    # reconnect once the database is back
                    connection.close_if_unusable_or_obsolete()
        finally:
            connection.close()


def worker_name(native_id: int | None = None) -> str:
    """The worker a job runs on: this host and the thread that runs its tasks (by default the
    calling one)."""
    return f"{socket.gethostname()}:{threading.get_native_id() if native_id is None else native_id}"


def worker_idle_beat(*, worker: str, queues: str) -> None:
    """Mark a job worker alive between jobs (a running job's heartbeat marks it meanwhile): only
    last_seen moves, so the active job and queue a job's heartbeat wrote are left as they are."""
    now = timezone.now()
    if not WorkerHeartbeat.objects.filter(hostname=worker).update(last_seen=now):
        WorkerHeartbeat.objects.get_or_create(
            hostname=worker, defaults={"last_seen": now, "queues": queues}
        )


class WorkerIdleHeartbeat(threading.Thread):
    """A job worker's heartbeat whether or not it runs a job, every JOB_HEARTBEAT_SECONDS, started
    in each process that runs jobs (workers/celery.py): the jobs page tells an idle worker (a
    recent heartbeat, no job) from one gone silent (stopped, or its machine unreachable)."""

    def __init__(self, worker: str, queues: str):
        super().__init__(daemon=True, name="idle-heartbeat")
        self.worker, self.queues = worker, queues
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while True:
                try:
                    worker_idle_beat(worker=self.worker, queues=self.queues)
                except Exception:  # a missed beat is not fatal: the next one may pass
                    log.exception("idle heartbeat of worker %s failed", self.worker)
                    connection.close_if_unusable_or_obsolete()
                if self.stopped.wait(settings.JOB_HEARTBEAT_SECONDS):
                    return
        finally:
            connection.close()
