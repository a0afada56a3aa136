"""Evaluation jobs through a real worker: finish, and survive a SIGKILL without duplicated or lost
games."""

from __future__ import annotations

import signal

import pytest

from tests.workers.conftest import wait_for
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.jobs.models import Job, JobStatus
from webapp.jobs.services import jobs_reap_stale
from webapp.play.models import Game

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def status_of(job: Job) -> str:
    job.refresh_from_db()
    return job.status


def test_evaluation_from_the_api_finishes_with_results(start_worker, client, researcher, settings):
    seed_word_lists()
    seed_model_specs()
    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    client.force_login(researcher)
    response = client.post(
        "/api/jobs/",
        {
            "kind": "evaluation",
            "config": {
                "guesser": "infogain",
                "judge": "kb",
                "word_list": "lmrl/objects",
                "samples": 2,
                "limit": 12,
                "batch_size": 8,
            },
        },
        content_type="application/json",
    )
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["id"])
    wait_for(
        lambda: status_of(job) in (JobStatus.FINISHED, JobStatus.FAILED),
        timeout=180,
        what=f"evaluation to finish; worker log:\n{worker.log()}",
    )
    assert job.status == JobStatus.FINISHED, job.error
    n = Game.objects.filter(job=job).count()
    assert n == 2 * (12 - len(job.result["skipped_words"])) and job.result["n_games"] == n
    assert job.result["success_rate"] > 0.5
    board = client.get("/api/leaderboards/?board=models").json()
    rows = board["rows"]
    assert [r for r in rows if r.get("guesser") == "infogain" or r.get("name") == "infogain"], board


def test_sigkill_mid_evaluation_requeues_and_finishes_without_duplicates(start_worker, settings):
    from webapp.jobs.services import job_submit

    seed_word_lists()
    seed_model_specs()
    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    job = job_submit(
        kind="evaluation",
        params={
            "guesser": "infogain",
            "judge": "kb",
            "word_list": "dbrl/paper_test",
            "samples": 1,
            "limit": 120,
            "batch_size": 4,
        },
    )
    wait_for(
        lambda: Game.objects.filter(job=job).count() >= 8,
        timeout=180,
        what=f"some games to be stored; log:\n{worker.log()}",
    )
    worker.kill(signal.SIGKILL)
    stored_before = Game.objects.filter(job=job).count()
    assert status_of(job) == JobStatus.RUNNING and stored_before < 120
    wait_for(
        lambda: jobs_reap_stale()["requeued"], timeout=30, what="the reaper to re-queue the job"
    )
    assert status_of(job) == JobStatus.QUEUED
    start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR, purge=False)
    wait_for(
        lambda: status_of(job) == JobStatus.FINISHED,
        timeout=240,
        what="the re-queued job to finish",
    )
    games = list(Game.objects.filter(job=job).values_list("secret", "sample_index"))
    assert len(games) == len(set(games))  # no duplicates
    assert len(games) == 120 - len(job.result["skipped_words"])  # none lost
    assert job.result["games_played_now"] == len(games) - stored_before
