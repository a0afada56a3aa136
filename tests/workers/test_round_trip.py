"""web → broker → worker → database, through a real worker process (not eager mode)."""

from __future__ import annotations

import signal

import pytest
from kombu import Connection

from tests.workers.conftest import filesystem_transport_options, wait_for
from webapp.jobs.models import Job, JobStatus

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def publish(job: Job, broker_url: str, transport_options: dict | None = None) -> None:
    """As the web app sends it: by the task's name (webapp.core.sending)."""
    from webapp.core import sending

    with Connection(broker_url, transport_options=transport_options or {}) as conn:
        sending.send_task(sending.JOB_RUN, kwargs={"job_id": job.pk}, queue="cpu", connection=conn)


def status_of(job: Job) -> str:
    job.refresh_from_db()
    return job.status


def test_round_trip_on_the_filesystem_broker(start_worker, tmp_path):
    worker = start_worker("filesystem://", tmp_path)
    job = Job.objects.create(
        kind="smoke", config={"message": "over files", "steps": 2, "seconds_per_step": 0}
    )
    publish(job, "filesystem://", filesystem_transport_options(tmp_path))
    wait_for(
        lambda: status_of(job) == JobStatus.FINISHED,
        what=f"job to finish; worker log:\n{worker.log()}",
    )
    assert job.result["echo"] == "over files"
    assert job.metrics.filter(name="smoke/step").count() == 2
    assert job.worker and job.started_at and job.finished_at


def test_round_trip_on_redis(start_worker, tmp_path, redis_url):
    if redis_url is None:
        pytest.skip("no Redis server reachable (CI starts one)")
    worker = start_worker(redis_url, tmp_path)
    job = Job.objects.create(kind="smoke", config={"message": "over redis"})
    publish(job, redis_url)
    wait_for(
        lambda: status_of(job) == JobStatus.FINISHED,
        what=f"job to finish; worker log:\n{worker.log()}",
    )
    assert job.result["echo"] == "over redis"


def test_api_submit_runs_on_the_configured_broker(start_worker, client, researcher, settings):
    """The whole path: the API queues through the app's own broker; the worker writes the result."""
    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    client.force_login(researcher)
    response = client.post(
        "/api/jobs/",
        {"kind": "smoke", "config": {"message": "via api"}},
        content_type="application/json",
    )
    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["id"])
    wait_for(
        lambda: status_of(job) == JobStatus.FINISHED,
        what=f"job to finish; worker log:\n{worker.log()}",
    )
    assert client.get(response["Location"]).json()["result"]["echo"] == "via api"


def test_cancel_moves_a_running_job_to_stopped(start_worker, tmp_path):
    from webapp.jobs.services import job_cancel

    worker = start_worker("filesystem://", tmp_path)
    job = Job.objects.create(kind="smoke", config={"steps": 2000, "seconds_per_step": 0.05})
    publish(job, "filesystem://", filesystem_transport_options(tmp_path))
    wait_for(
        lambda: status_of(job) == JobStatus.RUNNING, what=f"job to start; log:\n{worker.log()}"
    )
    assert job_cancel(job=job).status == JobStatus.STOPPING
    wait_for(
        lambda: status_of(job) not in (JobStatus.RUNNING, JobStatus.STOPPING), what="job to stop"
    )
    assert job.status == JobStatus.STOPPED, f"{job.status}: {job.error}\n{worker.log()}"
    assert 0 <= job.progress < 1


def test_sigkilled_worker_leaves_job_requeued_then_finished(start_worker, settings):
    """On the app's own broker, since the reaper re-queues through it."""
    from webapp.jobs.services import job_submit, jobs_reap_stale

    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    job = job_submit(kind="smoke", params={"steps": 40, "seconds_per_step": 0.1})
    wait_for(
        lambda: (
            job.refresh_from_db()
            or (job.status == JobStatus.RUNNING and job.checkpoints.count() >= 3)
        ),
        what="job to make progress",
    )
    worker.kill(signal.SIGKILL)
    assert status_of(job) == JobStatus.RUNNING  # nobody has noticed yet
    # the reaper notices the silence (JOB_STALE_SECONDS=5 in tests) and re-queues it
    report = wait_for(
        lambda: (r := jobs_reap_stale())["requeued"] and r, timeout=30, what="reaper to notice"
    )
    assert report["requeued"] == [job.pk]
    assert status_of(job) == JobStatus.QUEUED and job.requeues == 1
    start_worker(
        settings.CELERY_BROKER_URL, settings.DATA_DIR, purge=False
    )  # a fresh worker takes it
    wait_for(lambda: status_of(job) == JobStatus.FINISHED, what="re-queued job to finish")
    assert job.result["resumed_from"] >= 3  # continued from its last checkpoint
    steps = list(job.metrics.filter(name="smoke/step").values_list("step", flat=True))
    assert sorted(set(steps)) == list(range(1, 41))
