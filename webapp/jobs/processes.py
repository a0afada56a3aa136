"""Jobs that run in several processes (`processes` > 1 in a training config: GPUs on a GPU worker,
CPU processes on a CPU worker).

The worker keeps the job's lifecycle (claim, heartbeat, finished / stopped / failed) and starts the
run as a child `python -m torch.distributed.run --standalone --nproc_per_node N -m workers.rank …`.
torchrun rather than `accelerate launch`: accelerate's multi-process launcher calls torchrun
itself; `--standalone` takes a free rendezvous port on the node (two jobs on one node never clash
on accelerate's fixed 29500), and no accelerate config file on the worker's machine changes the
run. The trainers still build their `Accelerator`, which joins the group each rank opened.

Each rank (workers/rank.py → `rank_main`) sets up Django, rebuilds the job's config and calls the
kind's runner, as the worker does in-process: rank 0 with the job's DatabaseReporter (fenced by the
worker's claim: progress, metrics, logs and checkpoints reach the job from there, and it reads the
stop request the GRPO loop, and the SFT / DPO trainers' callback, broadcast to every rank), the
others with a `RankReporter` that writes nothing. The kinds with `processes`: grpo, sft and dpo
(SFT and DPO build their training rows on rank 0 alone: training.common.ranks).

Rank 0 leaves its outcome (finished with the result, stopped, superseded) in the run folder (ranks
still running RANKS_GRACE_SECONDS later, in a runner that does not broadcast the stop, are ended);
a rank that raises leaves its traceback there and exits non-zero, and torchrun ends the others.
Every rank exits when the worker or torchrun dies, so a killed worker never leaves a job running
unseen: its heartbeats stop and the reaper re-queues it as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError

from training.common.processes import process_problems
from training.reporting import StopRequested
from webapp.jobs import registry
from webapp.jobs.models import Job
from webapp.jobs.reporter import DatabaseReporter, Fence, JobFenced, json_safe, jsonable

ROOT = Path(__file__).resolve().parents[2]
OUTCOME = "outcome.json"
LAUNCHER_LOG = "launcher.log"
# how long a collective waits for a rank: rank 0 alone builds SFT / DPO training rows (teacher
# games, scored pairs) while the others wait for them (torch's default would end them at 30 min,
# NCCL's at 10; a rank that dies ends the others through torchrun whatever this is)
GROUP_TIMEOUT = timedelta(hours=6)
FENCED_EXIT = 3  # rank 0 was superseded: non-zero, so torchrun ends the ranks waiting on it
POLL_SECONDS = 0.5
TERM_GRACE_SECONDS = 15
RANKS_GRACE_SECONDS = 10  # how long the other ranks may run on once rank 0 has its outcome
LOG_TAIL = 6000
ROOT_CAUSE = re.compile(
    r"Root Cause.*?rank\s*:\s*(?P<rank>\d+).*?traceback\s*:\s*(?P<why>[^\n]*)", re.S
)
LAUNCH_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK")
LAUNCH_VARIABLES += ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")


class RanksFailed(Exception):
    """A rank of a multi-process job died: `str()` says which and why, `details` is its traceback
    (or the launcher's last lines when it left none)."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


# -- the job's side: how many processes, validated before queueing --------------------------------
def processes_of(config) -> int:
    """The processes a job's config asks for (1 for kinds without the field)."""
    return int(getattr(config, "processes", 1) or 1)


def check_processes(config, errors: dict) -> None:
    """`processes` within what this deployment's nodes run (JOBS_MAX_PROCESSES per job), and what
    the config itself allows across processes (training.common.processes)."""
    n = processes_of(config)
    if n <= 1:
        return
    most = settings.JOBS_MAX_PROCESSES
    problems = []
    if n > most:
        problems.append(
            f"this deployment runs at most {most} processes per job (JOBS_MAX_PROCESSES: the GPUs "
            "of a GPU node, or CPU processes)"
        )
    problems += process_problems(config, n)
    if problems:
        errors.setdefault("processes", []).extend(problems)


def check_job_processes(config) -> None:
    """check_processes for a kind with no other reference to check (smoke)."""
    errors: dict = {}
    check_processes(config, errors)
    if errors:
        raise ValidationError(errors)


# -- the worker's side: start the ranks, wait, read the outcome ------------------------------------
def run_folder(job_id: int, claim: int) -> Path:
    """Where one claim's ranks leave their outcome, errors and the launcher's log (next to, not
    in, the job's output folder, whose contents the runners resume from)."""
    return Path(settings.CHECKPOINTS_DIR) / f"job-{job_id}-ranks" / f"claim-{claim}"


def launch_command(job_id: int, claim: int, folder: Path, processes: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={processes}",
        "--max_restarts=0",
        "-m",
        "workers.rank",
        f"--job={job_id}",
        f"--claim={claim}",
        f"--folder={folder}",
    ]


def _stop_launcher(proc: subprocess.Popen) -> None:
    """SIGTERM torchrun (it ends its ranks), then SIGKILL; the ranks' watchdog ends any left."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=TERM_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_in_processes(
    job: Job, claim: int, processes: int, superseded: Callable[[], bool] = lambda: False
) -> dict:
    """Run the job's runner in `processes` ranks under this worker's claim and wait (the worker's
    heartbeat thread keeps the job alive meanwhile): rank 0's result; StopRequested after a
    requested stop, JobFenced once superseded, RanksFailed when a rank died."""
    if processes > settings.JOBS_MAX_PROCESSES:  # this node's own bound (GPU_PROCESSES in compose)
        raise ValueError(
            f"the job asks for {processes} processes; this worker runs at most "
            f"{settings.JOBS_MAX_PROCESSES} (JOBS_MAX_PROCESSES)"
        )
    folder = run_folder(job.pk, claim)
    folder.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARIABLES}
    env["JOB_WORKER_PID"] = str(os.getpid())
    with open(folder / LAUNCHER_LOG, "ab") as log:
        proc = subprocess.Popen(
            launch_command(job.pk, claim, folder, processes),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        ended_by_worker = False
        try:
            decided = None  # when rank 0 left its outcome
            while proc.poll() is None:
                if superseded():
                    raise JobFenced(f"job {job.pk}: claim {claim} was superseded")
                if decided is None and (folder / OUTCOME).is_file():
                    decided = time.monotonic()
                if decided is not None and time.monotonic() - decided > RANKS_GRACE_SECONDS:
                    # rank 0 is done, e.g. stopped by a runner that does not broadcast the stop:
                    # the other ranks are ended, not waited for
                    _stop_launcher(proc)
                    ended_by_worker = True
                time.sleep(POLL_SECONDS)
        finally:  # a soft time limit, a superseded claim, a worker shutting down
            _stop_launcher(proc)
    return read_outcome(folder, 0 if ended_by_worker else proc.returncode)


def read_outcome(folder: Path, returncode: int | None) -> dict:
    """What the ranks left in `folder`: rank 0's result, or the exception that says how they
    ended (the first rank to fail is the cause; the others were ended by torchrun)."""
    outcome_path = folder / OUTCOME
    outcome = json.loads(outcome_path.read_text()) if outcome_path.is_file() else {}
    status = outcome.get("status")
    if status == "finished" and returncode == 0:
        return outcome["result"]
    if status == "stopped" and returncode == 0:
        raise StopRequested()
    if status == "fenced":
        raise JobFenced(f"{folder}: rank 0's claim was superseded")
    errors = {}
    for path in folder.glob("rank-*.error.json"):
        with contextlib.suppress(ValueError, OSError, KeyError):
            error = json.loads(path.read_text())
            errors[int(error["rank"])] = error
    tail = ""
    with contextlib.suppress(OSError):
        tail = (folder / LAUNCHER_LOG).read_text(errors="replace")[-LOG_TAIL:]
    cause = ROOT_CAUSE.search(tail)  # torchrun's "Root Cause (first observed failure)"
    rank = int(cause["rank"]) if cause else None
    if cause is None and errors:  # no summary from torchrun: the first rank to fail
        rank = min(errors, key=lambda r: (errors[r].get("time", 0.0), r))
    if rank in errors:
        raise RanksFailed(f"rank {rank} failed: {errors[rank]['error']}", errors[rank]["traceback"])
    if cause:  # killed without a traceback (a signal, the OOM killer, a crash in C)
        raise RanksFailed(f"rank {rank} died: {cause['why'].strip()}", tail)
    raise RanksFailed(
        f"the ranks exited with status {returncode} without a result; see {folder / LAUNCHER_LOG}",
        tail,
    )


# -- a rank's side ---------------------------------------------------------------------------------
class RankReporter(DatabaseReporter):
    """The reporter of ranks other than 0: the job's output folder and last checkpoint (every rank
    resumes from the same one), and no writes; rank 0 decides when to stop."""

    is_main = False

    def fenced(self):
        return contextlib.nullcontext()

    def ensure_owner(self) -> None:
        pass

    def progress(self, fraction: float, message: str = "") -> None:
        pass

    def metrics(self, step: int, values: dict[str, float]) -> None:
        pass

    def log(self, message: str, level: str = "info") -> None:
        pass

    def checkpoint(self, step, path, *, metrics=None, config=None, is_adapter=False) -> None:
        return None

    def artifact(self, kind, name, path, meta=None) -> None:
        return None

    def should_stop(self) -> bool:
        return False


def is_main(reporter) -> bool:
    """Whether `reporter` is the one that writes (rank 0, or a run in one process)."""
    return getattr(reporter, "is_main", True)


def _barrier() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


@contextlib.contextmanager
def main_first(reporter) -> Iterator[bool]:
    """Rank 0 runs the block (writing what the others read, e.g. a merged base model) before the
    other ranks enter it; yields whether this rank is the main one. One process: just the block."""
    main = is_main(reporter)
    if not main:
        _barrier()
    yield main
    if main:
        _barrier()


def _watch(pids: list[int]) -> None:
    """End this rank as soon as one of `pids` (the worker, torchrun) is gone: a killed worker
    must not leave its ranks training, and writing under its claim, unseen."""

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def watch() -> None:
        parent = os.getppid()
        while all(alive(p) for p in pids) and os.getppid() == parent:
            time.sleep(1.0)
        os._exit(137)

    threading.Thread(target=watch, daemon=True, name="rank-watchdog").start()


def _join_group() -> None:
    """Open the process group the trainer's Accelerator then joins (NCCL on GPUs, gloo on the
    CPU), so the web-side preparation can wait for rank 0 (main_first)."""
    import torch
    import torch.distributed as dist

    if dist.is_initialized():
        return
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group("nccl", timeout=GROUP_TIMEOUT)
    else:
        dist.init_process_group("gloo", timeout=GROUP_TIMEOUT)


def _write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(json_safe(data)))
    tmp.replace(path)


def _leave_group() -> None:
    """Close this rank's process group before the process exits. Left open, gloo's transport can
    abort the process (SIGABRT, "terminate called without an active exception") when another rank
    exits first: measured with two gloo ranks under torchrun, 9 of 25 runs aborted without this, 0
    of 25 with it. Local, no collective: a rank never waits here for the others."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        with contextlib.suppress(Exception):  # the exit status is decided: nothing may change it
            dist.destroy_process_group()


def rank_main(job_id: int, claim: int, folder: Path) -> int:
    """One rank of a multi-process job (Django is set up): the exit status."""
    try:
        return _rank_main(job_id, claim, folder)
    finally:
        _leave_group()


def _rank_main(job_id: int, claim: int, folder: Path) -> int:
    rank = int(os.environ.get("RANK", "0"))
    folder = Path(folder)
    watched = [os.getppid()]
    if os.environ.get("JOB_WORKER_PID"):
        watched.append(int(os.environ["JOB_WORKER_PID"]))
    _watch(watched)
    (folder / f"rank-{rank}.pid").write_text(str(os.getpid()))
    try:
        _join_group()
        job = Job.objects.get(pk=job_id)
        kind = registry.get_kind(job.kind)
        config = registry.build_config(kind, job.config)
        fence = Fence(job_id, claim)
        reporter = DatabaseReporter(job, fence=fence) if rank == 0 else RankReporter(job, fence)
        result = kind.runner_fn()(config, reporter)
    except StopRequested:
        if rank == 0:
            _write(folder / OUTCOME, {"status": "stopped"})
        return 0
    except JobFenced:
        if rank == 0:
            _write(folder / OUTCOME, {"status": "fenced"})
        return FENCED_EXIT
    except BaseException as exc:
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        if isinstance(exc, ValidationError):
            error = f"invalid config: {exc.messages}"
        _write(
            folder / f"rank-{rank}.error.json",
            {
                "rank": rank,
                "time": time.time(),
                "error": error,
                "traceback": traceback.format_exc(),
            },
        )
        return 1
    if rank == 0:
        _write(folder / OUTCOME, {"status": "finished", "result": jsonable(result)})
    return 0
