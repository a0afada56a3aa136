"""Jobs in 2 processes, from the API through a real worker (issue 35): the worker starts the ranks
under torchrun; rank 0 reports metrics and checkpoints, a cancel stops every rank, a GRPO job
resumes to the end, an SFT job ends with its model stored, and a rank that dies fails the job with
what killed it. One worker serves the module (starting one per test cost seconds each); a test that
kills it leaves the next test a new one."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.training.sft.helpers import tiny_model
from tests.webapp.jobs.test_grpo_kind import FAST as GRPO_FAST
from tests.workers.conftest import WorkerProcess, wait_for
from webapp.catalog.models import ModelSpec, Split
from webapp.catalog.services import SeedEntry, seed_model_specs, word_list_create
from webapp.jobs.models import Checkpoint, Job, JobStatus, Metric
from webapp.jobs.processes import OUTCOME, run_folder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
# STEPS: after the first checkpoint the cancel (polled each second by rank 0) must land before the
# last step on a quiet machine too, where a step takes about 0.3 s (five raced it there)
STEPS = 12
GRPO = {**GRPO_FAST, "word_list": "p/words", "split": "rl", "processes": 2, "steps": STEPS}
GRPO["secrets_per_step"] = 2  # one group per process
# the cheapest SFT: 4 of the paper's turns (no teacher games), one step of 2 examples per process
SFT = dict(source="reference", max_turn_examples=4, max_steps=1, processes=2, cpu_threads=1)
SFT |= dict(global_batch_size=4, per_device_batch_size=2, learning_rate=1e-3)
ENDED = (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED)
LOG_TAIL = 6000


class ModuleWorker:
    """The module's worker: started on first use, and again after a test killed it."""

    def __init__(self, folder: Path):
        self.folder, self.current, self.started = folder, None, 0

    def alive(self) -> WorkerProcess:
        if self.current is None or self.current.proc.poll() is not None:
            self.stop()
            self.started += 1
            log = self.folder / f"worker-{self.started}.log"
            self.current = WorkerProcess(settings.CELERY_BROKER_URL, Path(settings.DATA_DIR), log)
            self.current.wait_ready()
        return self.current

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()


@pytest.fixture(scope="module")
def module_worker(django_db_setup, tmp_path_factory):
    workers = ModuleWorker(tmp_path_factory.mktemp("process-jobs"))
    yield workers
    workers.stop()


@pytest.fixture
def worker(module_worker) -> WorkerProcess:
    return module_worker.alive()


@pytest.fixture
def seeded(tmp_path_factory):
    seed_model_specs(tiny_model(tmp_path_factory))
    word_list_create(
        name="p/words",
        entries=[SeedEntry(w, split=Split.RL) for w in ("dog", "apple", "car", "table")],
    )


def submit(client, kind: str, **config) -> Job:
    response = client.post(
        "/api/jobs/", {"kind": kind, "config": config}, content_type="application/json"
    )
    assert response.status_code == 202, response.json()
    return Job.objects.get(pk=response.json()["id"])


def status_of(job: Job) -> str:
    job.refresh_from_db()
    return job.status


def until(worker: WorkerProcess, predicate, what: str, timeout: float = 60):
    """wait_for, with the worker's log (as it is then) when it times out."""
    try:
        return wait_for(predicate, timeout=timeout, what=what)
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}; worker log:\n{worker.log()[-LOG_TAIL:]}") from None


def ended(job: Job, worker: WorkerProcess, timeout: float = 60) -> str:
    """The job's status once it has ended (its fields refreshed)."""
    until(worker, lambda: status_of(job) in ENDED, f"job {job.pk} to end", timeout)
    return job.status


def rank_pids(job: Job) -> dict[int, int]:
    folder = run_folder(job.pk, Job.objects.get(pk=job.pk).claim)
    return {
        int(p.name.split("-")[1].split(".")[0]): int(p.read_text())
        for p in folder.glob("rank-*.pid")
    }


def stepping(job: Job, worker: WorkerProcess) -> dict[int, int]:
    """The pids of the job's 2 ranks, once rank 0 has reported a step."""
    until(worker, lambda: job.metrics.exists() and len(rank_pids(job)) == 2, "a step")
    return rank_pids(job)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) is gone too
    status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return status != "Z"


def steps_of(job: Job, metric: str) -> list[int]:
    return list(
        Metric.objects.filter(job=job, name=metric).order_by("step").values_list("step", flat=True)
    )


def test_a_two_process_grpo_job_reports_stops_and_resumes(worker, rclient, seeded):
    started = time.monotonic()
    job = submit(rclient, "grpo", **GRPO)

    def checkpointed() -> bool:
        assert status_of(job) in (JobStatus.QUEUED, JobStatus.RUNNING), job.error
        return Checkpoint.objects.filter(job=job).exists()

    until(worker, checkpointed, "a checkpoint", timeout=120)
    assert rclient.post(f"/api/jobs/{job.pk}/cancel/").status_code == 200
    assert ended(job, worker) == JobStatus.STOPPED, (job.error, list(job.logs.values_list()))
    assert job.logs.filter(message__endswith="in 2 processes").exists()
    stopped_at = max(Checkpoint.objects.filter(job=job).values_list("step", flat=True))
    assert 1 <= stopped_at < STEPS
    # rank 0 reported once per step, and saved (and registered) the checkpoints
    assert steps_of(job, "reward") == list(range(1, stopped_at + 1))
    assert job.logs.filter(message__contains="× 2 processes").count() == 1
    assert job.logs.filter(message="stopped on request").exists()

    assert rclient.post(f"/api/jobs/{job.pk}/resume/").status_code == 202
    assert ended(job, worker, 120) == JobStatus.FINISHED, (job.error, list(job.logs.values_list()))
    assert job.result["global_step"] == STEPS and job.result["resumed_from"] == stopped_at
    assert steps_of(job, "reward") == list(range(1, STEPS + 1))
    final = Checkpoint.objects.get(job=job, step=STEPS)
    assert final.is_adapter and final.config["resolved"]["processes"] == 2
    assert ModelSpec.objects.get(name=job.result["model_spec"]) == final.model_spec
    # the ranks were gone when the worker marked the job
    for pid in rank_pids(job).values():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    print(f"2-process GRPO job: run, stop, resume in {time.monotonic() - started:.1f}s")


def test_a_two_process_sft_job_ends_with_its_model_stored(worker, rclient, seeded):
    started = time.monotonic()
    job = submit(rclient, "sft", **SFT)
    assert ended(job, worker, 120) == JobStatus.FINISHED, (job.error, list(job.logs.values_list()))
    assert job.logs.filter(message__endswith="in 2 processes").exists()
    assert job.result["global_step"] == 1 and job.result["examples"] == 4
    # one step of 2 examples in each process: no accumulation; rank 0 alone reported and saved
    final = Checkpoint.objects.get(job=job)
    resolved = final.config["resolved"]
    assert (resolved["world_size"], resolved["gradient_accumulation_steps"]) == (2, 1)
    assert steps_of(job, "loss") == [1] and job.artifacts.filter(kind="sft-examples").count() == 1
    spec = ModelSpec.objects.get(name=job.result["model_spec"])
    assert final.model_spec == spec and spec.path == final.path
    assert (Path(spec.path) / "model.safetensors").is_file()
    print(f"2-process SFT job: {time.monotonic() - started:.1f}s")


def test_a_rank_that_raises_fails_the_job_with_its_traceback(worker, rclient):
    job = submit(rclient, "smoke_ranks", processes=2, steps=2, fail_on_rank=1)
    assert ended(job, worker) == JobStatus.FAILED
    assert job.error == "rank 1 failed: RuntimeError: smoke: rank 1 fails at step 2, as asked"
    trace = job.logs.get(level="error").message
    assert "Traceback" in trace and "training/smoke.py" in trace and "rank_main" in trace


def test_a_rank_that_dies_fails_the_job_with_its_cause(worker, rclient):
    job = submit(rclient, "smoke_ranks", processes=2, steps=1000, seconds_per_step=0.05)
    os.kill(stepping(job, worker)[1], signal.SIGKILL)
    assert ended(job, worker) == JobStatus.FAILED
    assert job.error.startswith("rank 1 died: Signal 9 (SIGKILL)"), job.error
    assert not alive(rank_pids(job)[0])


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_a_cancel_ends_ranks_that_do_not_hear_it(worker, rclient):
    """smoke_ranks does not broadcast the stop: rank 0 stops, the others are ended after a grace
    (RANKS_GRACE_SECONDS), not waited for: rank 1 still runs once rank 0 has left its outcome, and
    when the job is marked stopped neither rank nor their launcher is left, and rank 1 left no
    error (it was ended, it did not fail). The deadlines only keep a regression from hanging."""
    job = submit(rclient, "smoke_ranks", processes=2, steps=10_000, seconds_per_step=0.05)
    pids = stepping(job, worker)
    launcher = parent_of(pids[0])  # torchrun, the worker's child that started the ranks
    folder = run_folder(job.pk, Job.objects.get(pk=job.pk).claim)
    assert rclient.post(f"/api/jobs/{job.pk}/cancel/").status_code == 200
    until(worker, lambda: (folder / OUTCOME).is_file(), "rank 0's outcome")
    deaf = alive(pids[1])  # rank 0 has decided; rank 1 heard nothing and runs on (for a grace)
    # the hang guard: waited for, rank 1 would run its 10,000 steps of 0.05 s (over 8 minutes)
    assert ended(job, worker, 60) == JobStatus.STOPPED, job.error
    assert deaf, "rank 1 did not outlive rank 0's outcome: no rank here needed ending"
    assert json.loads((folder / OUTCOME).read_text()) == {"status": "stopped"}
    assert job.logs.filter(message="stopped on request").exists()
    assert not any(alive(pid) for pid in (*pids.values(), launcher))
    assert sorted(p.name for p in folder.glob("rank-*.error.json")) == []


def test_a_killed_worker_takes_its_ranks_with_it_and_the_reaper_requeues(worker, rclient):
    from webapp.jobs.services import jobs_reap_stale

    job = submit(rclient, "smoke_ranks", processes=2, steps=1000, seconds_per_step=0.05)
    pids = stepping(job, worker)
    worker.kill(signal.SIGKILL)  # the module's next test (if any) gets a new worker
    wait_for(lambda: not any(alive(p) for p in pids.values()), timeout=10, what="the ranks to end")
    steps = job.metrics.count()
    time.sleep(settings.JOB_STALE_SECONDS + 1)
    assert job.metrics.count() == steps  # nothing runs under the dead worker's claim
    assert jobs_reap_stale()["requeued"] == [job.pk]
