"""Jobs in several processes (webapp.jobs.processes), without starting any: `processes` validated
before queueing, what the worker reads from the ranks' folder, and the silent reporter of ranks
other than 0. The runs themselves: tests/workers/test_process_jobs.py."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest
from django.core.exceptions import ValidationError

from tests.sending import tasks_held
from training.reporting import StopRequested
from webapp.catalog.models import Split
from webapp.catalog.services import SeedEntry, seed_model_specs, word_list_create
from webapp.jobs.models import Checkpoint, Job, JobLog, Metric
from webapp.jobs.processes import (
    OUTCOME,
    RankReporter,
    RanksFailed,
    launch_command,
    read_outcome,
    run_folder,
)
from webapp.jobs.reporter import Fence, JobFenced
from webapp.jobs.services import job_submit

pytestmark = pytest.mark.django_db
TORCHRUN_TAIL = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
Failures:
[1]:
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 15223)  (SIGTERM)
  traceback : Signal 15 (SIGTERM) received by PID 15223
-------------------------------------------------------
Root Cause (first observed failure):
[0]:
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 15224)  (SIGKILL)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 15224
"""


@pytest.fixture
def seeded(tmp_path):
    seed_model_specs(tmp_path)
    word_list_create(
        name="g/words", entries=[SeedEntry(w, split=Split.RL) for w in ("dog", "cat", "car")]
    )


def submit(kind="grpo", **params) -> Job:
    with tasks_held():
        return job_submit(kind=kind, params=params)


def refused(kind="grpo", **params) -> list[str]:
    with pytest.raises(ValidationError) as err:
        submit(kind, **params)
    assert Job.objects.count() == 0
    return err.value.message_dict["processes"]


def test_processes_are_validated_before_queueing(seeded, settings):
    settings.JOBS_MAX_PROCESSES = 4
    assert submit(word_list="g/words", processes=2, secrets_per_step=2).config["processes"] == 2
    assert submit(word_list="g/words").config["processes"] == 1
    Job.objects.all().delete()
    assert refused(word_list="g/words", processes=0) == ["processes must be between 1 and 64"]
    assert "at most 4 processes per job" in refused(word_list="g/words", processes=8)[0]
    assert (
        "secrets_per_step=2 leaves a process without a group"
        in refused(word_list="g/words", processes=3, secrets_per_step=2)[0]
    )
    assert "vllm" in refused(word_list="g/words", processes=2, rollout_backend="vllm")[0]
    assert "at most 4" in refused(kind="smoke_ranks", processes=5)[0]


def test_the_launch_is_torchrun_standalone_with_the_job_and_its_claim(tmp_path):
    command = launch_command(7, 3, tmp_path, 4)
    at = command.index("torch.distributed.run")
    assert command[at + 1 : at + 4] == ["--standalone", "--nproc_per_node=4", "--max_restarts=0"]
    assert command[-5:] == ["-m", "workers.rank", "--job=7", "--claim=3", f"--folder={tmp_path}"]


def write(folder, name, data) -> None:
    (folder / name).write_text(json.dumps(data))


def test_rank_zeros_outcome_is_the_jobs(tmp_path):
    write(tmp_path, OUTCOME, {"status": "finished", "result": {"global_step": 3}})
    assert read_outcome(tmp_path, 0) == {"global_step": 3}
    write(tmp_path, OUTCOME, {"status": "stopped"})
    with pytest.raises(StopRequested):
        read_outcome(tmp_path, 0)
    write(tmp_path, OUTCOME, {"status": "fenced"})
    with pytest.raises(JobFenced):
        read_outcome(tmp_path, 3)


def test_a_failed_rank_is_named_with_its_traceback_even_after_rank_zero_finished(tmp_path):
    write(tmp_path, OUTCOME, {"status": "finished", "result": {}})
    for rank, (when, error) in enumerate(
        [(2.0, "RuntimeError: peer gone"), (1.0, "KeyError: 'x'")]
    ):
        write(
            tmp_path,
            f"rank-{rank}.error.json",
            {"rank": rank, "time": when, "error": error, "traceback": f"Traceback {rank}"},
        )
    with pytest.raises(RanksFailed) as err:
        read_outcome(tmp_path, 1)
    assert str(err.value) == "rank 1 failed: KeyError: 'x'" and err.value.details == "Traceback 1"


def test_a_killed_rank_is_named_from_torchruns_root_cause(tmp_path):
    # rank 0 saw its peer vanish and wrote an error; the root cause is rank 1's SIGKILL
    write(
        tmp_path,
        "rank-0.error.json",
        {"rank": 0, "time": 1.0, "error": "RuntimeError: Connection closed", "traceback": "T0"},
    )
    (tmp_path / "launcher.log").write_text("rank 0 output\n" + TORCHRUN_TAIL)
    with pytest.raises(RanksFailed) as err:
        read_outcome(tmp_path, 1)
    assert str(err.value) == "rank 1 died: Signal 9 (SIGKILL) received by PID 15224"
    assert "Root Cause" in err.value.details
    (tmp_path / "launcher.log").write_text("no summary\n")
    (tmp_path / "rank-0.error.json").unlink()
    with pytest.raises(RanksFailed, match="exited with status -9 without a result"):
        read_outcome(tmp_path, -9)


def test_the_other_ranks_read_the_last_checkpoint_and_write_nothing(tmp_path):
    job = Job.objects.create(kind="smoke", config={}, status="running", claim=1)
    Checkpoint.objects.create(job=job, step=2, path=str(tmp_path / "checkpoint-2"))
    reporter = RankReporter(job, Fence(job.pk, 1))
    assert reporter.last_checkpoint()["step"] == 2 and not reporter.is_main
    reporter.metrics(3, {"loss": 1.0})
    reporter.log("hello")
    reporter.progress(0.5)
    reporter.checkpoint(3, tmp_path / "checkpoint-3")
    Job.objects.filter(pk=job.pk).update(status="stopping")
    assert reporter.should_stop() is False  # rank 0 decides, and broadcasts
    assert not Metric.objects.exists() and not JobLog.objects.exists()
    assert Checkpoint.objects.count() == 1
    assert Job.objects.get(pk=job.pk).progress == 0


@pytest.mark.django_db(transaction=True)  # a failing job_run closes the database connection
def test_a_worker_refuses_more_processes_than_its_node_runs(settings):
    from webapp.jobs.services import job_run

    settings.JOB_HEARTBEAT_SECONDS = 3600
    job = Job.objects.create(kind="smoke_ranks", config={"processes": 4}, task_id="t")
    settings.JOBS_MAX_PROCESSES = 2  # e.g. queued before this node's GPU_PROCESSES was lowered
    assert job_run(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert "asks for 4 processes; this worker runs at most 2" in job.error


def test_server_rollouts_take_a_checked_url_or_the_deployments(seeded, settings):
    settings.GENERATION_SERVER_URL = ""
    with pytest.raises(ValidationError) as err:
        submit(word_list="g/words", rollout_backend="server")
    assert "rollout_server" in err.value.message_dict
    with pytest.raises(ValidationError) as err:
        submit(word_list="g/words", rollout_backend="server", rollout_server="ftp://gen:8000")
    assert "rollout_server" in err.value.message_dict and Job.objects.count() == 0
    settings.GENERATION_SERVER_URL = "http://generation:8000"
    job = submit(word_list="g/words", rollout_backend="server", processes=2, secrets_per_step=2)
    assert job.config["rollout_server"] == "http://generation:8000"  # stored with the job
    named = submit(word_list="g/words", rollout_backend="server", rollout_server="http://gen2:80")
    assert named.config["rollout_server"] == "http://gen2:80"
    assert submit(word_list="g/words").config["rollout_server"] == ""


@pytest.mark.parametrize("kind", ["sft", "dpo"])
def test_sft_and_dpo_processes_are_validated_before_queueing(seeded, settings, kind):
    settings.JOBS_MAX_PROCESSES = 4
    words = dict(word_list="g/words", pool_word_list="g/words")
    job = submit(kind, **words, processes=4, global_batch_size=32, per_device_batch_size=8)
    assert job.config["processes"] == 4 and submit(kind, **words).config["processes"] == 1
    Job.objects.all().delete()
    assert refused(kind=kind, **words, processes=0) == ["processes must be between 1 and 64"]
    assert "at most 4 processes per job" in refused(kind=kind, **words, processes=5)[0]
    batch = dict(global_batch_size=8, per_device_batch_size=8)
    assert refused(kind=kind, **words, processes=2, **batch) == [
        "global_batch_size=8 is less than per_device_batch_size=8 × 2 processes: use "
        "per_device_batch_size at most 4 (or fewer processes)"
    ]


@pytest.mark.django_db(transaction=True)  # job_run closes the database connection
def test_a_dpo_job_in_processes_runs_under_torchrun_and_takes_rank_zeros_result(seeded, settings):
    """The multi-process path is the kind's runner in each rank (tests/workers/test_process_jobs.py
    runs it for sft); for dpo: the launch and what the worker makes of rank 0's outcome."""
    from webapp.jobs.services import job_run

    settings.JOB_HEARTBEAT_SECONDS = 3600
    job = submit("dpo", word_list="g/words", pool_word_list="g/words", processes=2)
    Job.objects.filter(pk=job.pk).update(task_id="t")
    launched = []

    class Ranks:  # torchrun as far as the worker sees it: rank 0 finished, every rank exited 0
        returncode = 0

        def __init__(self, command, **options):
            launched.append(command)
            folder = Path(command[-1].removeprefix("--folder="))
            write(folder, OUTCOME, {"status": "finished", "result": {"model_spec": "dpo-x"}})

        def poll(self):
            return 0

    with mock.patch("webapp.jobs.processes.subprocess.Popen", Ranks):
        assert job_run(job_id=job.pk) == "finished"
    job.refresh_from_db()
    assert job.result == {"model_spec": "dpo-x"}
    assert launched == [launch_command(job.pk, job.claim, run_folder(job.pk, job.claim), 2)]
    assert job.logs.filter(message__endswith="in 2 processes").exists()


def test_a_rank_leaves_its_process_group_however_it_ends(tmp_path, monkeypatch):
    """Left open, gloo can abort a rank (SIGABRT) when another rank exits first."""
    import socket

    import torch.distributed as dist

    from webapp.jobs import processes

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name, value in {"WORLD_SIZE": "1", "RANK": "0", "MASTER_ADDR": "127.0.0.1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MASTER_PORT", str(port))
    monkeypatch.delenv("JOB_WORKER_PID", raising=False)
    assert processes.rank_main(999_999, 1, tmp_path) == 1  # no such job: this rank's error
    error = json.loads((tmp_path / "rank-0.error.json").read_text())["error"]
    assert "DoesNotExist" in error
    assert not dist.is_initialized()
