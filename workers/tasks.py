"""Thin Celery tasks: take ids, call one service. No business logic here. And the worker-process
hook that starts a job worker's heartbeat between jobs."""

from __future__ import annotations

import threading

from celery import shared_task
from celery.signals import worker_process_init

JOB_QUEUES = frozenset({"cpu", "gpu"})


@shared_task(name="jobs.run", acks_late=True, reject_on_worker_lost=True)
def job_run_task(*, job_id: int) -> str:
    from webapp.jobs.services import job_run

    return job_run(job_id=job_id)


@shared_task(name="jobs.reap_stale")
def jobs_reap_stale_task() -> dict:
    from webapp.jobs.services import jobs_reap_stale

    return jobs_reap_stale()


@shared_task(name="jobs.republish_lost")
def jobs_republish_lost_task() -> list[int]:
    from webapp.jobs.services import jobs_republish_lost

    return jobs_republish_lost()


@shared_task(name="leaderboards.refresh")
def leaderboards_refresh_task() -> dict:
    from webapp.leaderboards.services import leaderboards_refresh_pending

    return leaderboards_refresh_pending()


@worker_process_init.connect
def _idle_heartbeat(**_):
    """A process that runs jobs (a prefork child, or a solo worker's own process) beats between
    jobs too, under the name its jobs run under (webapp.jobs.heartbeats.worker_name of this
    process's main thread, which runs the tasks): the jobs page tells idle from silent. Workers
    of other queues (housekeeping, leaderboards) run no job and send none."""
    from workers.celery import app

    queues = sorted(JOB_QUEUES & set(app.amqp.queues.consume_from))
    if not queues:
        return None
    from webapp.jobs.heartbeats import WorkerIdleHeartbeat, worker_name

    beat = WorkerIdleHeartbeat(worker_name(threading.main_thread().native_id), ",".join(queues))
    beat.start()
    return beat
