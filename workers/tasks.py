"""Thin Celery tasks: take ids, call one service. No business logic here."""

from __future__ import annotations

from celery import shared_task


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
