"""A GRPO job in 2 processes, from the API through a real worker (issue 35): the worker starts the
ranks under torchrun; rank 0 reports metrics and checkpoints, a cancel stops every rank, the job
resumes to the end, and a rank that dies fails the job with what killed it."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.workers.conftest import wait_for
from webapp.catalog.models import ModelSpec, Split
from webapp.catalog.services import SeedEntry, seed_model_specs, word_list_create
from webapp.jobs.models import Checkpoint, Job, JobStatus, Metric
from webapp.jobs.processes import run_folder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
CONFIG = dict(
    word_list="p/words",
    split="rl",
    processes=2,
    secrets_per_step=2,  # one group per process
    num_generations=2,
    max_turns=2,
    max_completion_length=6,
    learning_rate=3e-3,
    save_steps=1,
    rollout_filter_ratio=1.0,
    cpu_threads=1,
)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from training.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("process-jobs") / "tiny", hidden=32, intermediate=64, seed=0
    )


@pytest.fixture
def api(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture
def seeded(tiny_model):
    seed_model_specs(tiny_model)
    word_list_create(
        name="p/words",
        entries=[SeedEntry(w, split=Split.RL) for w in ("dog", "apple", "car", "table")],
    )


def status_of(job: Job) -> str:
    job.refresh_from_db()
    return job.status


def submit(api, **overrides) -> Job:
    response = api.post(
        "/api/jobs/",
        {"kind": "grpo", "config": {**CONFIG, **overrides}},
        content_type="application/json",
    )
    assert response.status_code == 202, response.json()
    return Job.objects.get(pk=response.json()["id"])


def test_a_two_process_grpo_job_reports_stops_and_resumes(start_worker, api, seeded, settings):
    started = time.monotonic()
    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    job = submit(api, steps=4)

    def checkpointed() -> bool:
        assert status_of(job) in (JobStatus.QUEUED, JobStatus.RUNNING), worker.log()[-3000:]
        return Checkpoint.objects.filter(job=job).exists()

    wait_for(checkpointed, timeout=120, what=f"a checkpoint; worker log:\n{worker.log()}")
    assert api.post(f"/api/jobs/{job.pk}/cancel/").status_code == 200
    wait_for(
        lambda: status_of(job) in (JobStatus.STOPPED, JobStatus.FAILED, JobStatus.FINISHED),
        timeout=60,
        what=f"the job to stop; worker log:\n{worker.log()}",
    )
    assert job.status == JobStatus.STOPPED, (job.error, list(job.logs.values_list("message")))
    assert job.logs.filter(message__endswith="in 2 processes").exists()
    stopped_at = max(Checkpoint.objects.filter(job=job).values_list("step", flat=True))
    assert 1 <= stopped_at < 4
    # rank 0 reported once per step, and saved (and registered) the checkpoints
    assert list(
        Metric.objects.filter(job=job, name="reward")
        .order_by("step")
        .values_list("step", flat=True)
    ) == list(range(1, stopped_at + 1))
    assert job.logs.filter(message__contains="× 2 processes").count() == 1
    assert job.logs.filter(message="stopped on request").exists()

    assert api.post(f"/api/jobs/{job.pk}/resume/").status_code == 202
    wait_for(
        lambda: status_of(job) in (JobStatus.FINISHED, JobStatus.FAILED),
        timeout=120,
        what=f"the resumed job to finish; worker log:\n{worker.log()}",
    )
    assert job.status == JobStatus.FINISHED, (job.error, list(job.logs.values_list("message")))
    assert job.result["global_step"] == 4 and job.result["resumed_from"] == stopped_at
    assert list(
        Metric.objects.filter(job=job, name="reward")
        .order_by("step")
        .values_list("step", flat=True)
    ) == [1, 2, 3, 4]
    final = Checkpoint.objects.get(job=job, step=4)
    assert final.is_adapter and final.config["resolved"]["processes"] == 2
    assert ModelSpec.objects.get(name=job.result["model_spec"]) == final.model_spec
    # the ranks were gone when the worker marked the job
    for pid_file in run_folder(job.pk, job.claim).glob("rank-*.pid"):
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.read_text()), 0)
    print(f"2-process GRPO job: run, stop, resume in {time.monotonic() - started:.1f}s")


def smoke(api, **config) -> Job:
    response = api.post(
        "/api/jobs/", {"kind": "smoke_ranks", "config": config}, content_type="application/json"
    )
    assert response.status_code == 202, response.json()
    return Job.objects.get(pk=response.json()["id"])


def test_a_rank_that_raises_fails_the_job_with_its_traceback(start_worker, api, settings):
    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    job = smoke(api, processes=2, steps=2, fail_on_rank=1)
    wait_for(
        lambda: status_of(job) in (JobStatus.FAILED, JobStatus.FINISHED),
        timeout=60,
        what=f"the job to fail; worker log:\n{worker.log()}",
    )
    assert job.status == JobStatus.FAILED
    assert job.error == "rank 1 failed: RuntimeError: smoke: rank 1 fails at step 2, as asked"
    trace = job.logs.get(level="error").message
    assert "Traceback" in trace and "training/smoke.py" in trace and "rank_main" in trace


def rank_pids(job: Job) -> dict[int, int]:
    folder = run_folder(job.pk, Job.objects.get(pk=job.pk).claim)
    return {
        int(p.name.split("-")[1].split(".")[0]): int(p.read_text())
        for p in folder.glob("rank-*.pid")
    }


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) is gone too
    status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return status != "Z"


def test_a_rank_that_dies_fails_the_job_with_its_cause(start_worker, api, settings):
    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    job = smoke(api, processes=2, steps=1000, seconds_per_step=0.05)
    wait_for(
        lambda: job.metrics.exists() and len(rank_pids(job)) == 2,
        timeout=60,
        what=f"a step; worker log:\n{worker.log()}",
    )
    os.kill(rank_pids(job)[1], signal.SIGKILL)
    wait_for(
        lambda: status_of(job) in (JobStatus.FAILED, JobStatus.FINISHED),
        timeout=60,
        what=f"the job to fail; worker log:\n{worker.log()}",
    )
    assert job.status == JobStatus.FAILED
    assert job.error.startswith("rank 1 died: Signal 9 (SIGKILL)"), job.error
    assert not alive(rank_pids(job)[0])


def test_a_killed_worker_takes_its_ranks_with_it_and_the_reaper_requeues(
    start_worker, api, settings
):
    from webapp.jobs.services import jobs_reap_stale

    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    job = smoke(api, processes=2, steps=1000, seconds_per_step=0.05)
    wait_for(
        lambda: job.metrics.exists() and len(rank_pids(job)) == 2,
        timeout=60,
        what=f"a step; worker log:\n{worker.log()}",
    )
    pids = rank_pids(job)
    worker.kill(signal.SIGKILL)
    wait_for(lambda: not any(alive(p) for p in pids.values()), timeout=10, what="the ranks to end")
    steps = job.metrics.count()
    time.sleep(settings.JOB_STALE_SECONDS + 1)
    assert job.metrics.count() == steps  # nothing runs under the dead worker's claim
    assert jobs_reap_stale()["requeued"] == [job.pk]


def test_a_cancel_ends_ranks_that_do_not_hear_it(start_worker, api, settings):
    """smoke_ranks does not broadcast the stop: rank 0 stops, the others are ended after a grace."""
    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)
    job = smoke(api, processes=2, steps=10_000, seconds_per_step=0.05)
    wait_for(
        lambda: job.metrics.exists() and len(rank_pids(job)) == 2,
        timeout=60,
        what=f"a step; worker log:\n{worker.log()}",
    )
    assert api.post(f"/api/jobs/{job.pk}/cancel/").status_code == 200
    asked = time.monotonic()
    wait_for(
        lambda: status_of(job) not in (JobStatus.RUNNING, JobStatus.STOPPING),
        timeout=40,
        what=f"the job to stop; worker log:\n{worker.log()}",
    )
    assert job.status == JobStatus.STOPPED, job.error
    assert time.monotonic() - asked < 30  # not the 10,000 steps of rank 1
    assert not any(alive(p) for p in rank_pids(job).values())
