"""`python -m bench.faults [--trials N] [--scenarios kill9,sigstop,...]`: faults injected into real
processes on this machine, each scenario N times, on a private Postgres cluster (port 5499, under
/tmp) and a private redis-server (port 6399, no persistence), so the machine's shared services are
never touched. Processes: Celery job workers (prefork), a housekeeping worker running the beat,
and gunicorn for the submit scenario, as in `make run` and the compose layout.

Scenarios (each trial an `evaluation` job: information-gain guesser, KB judge, a few words):
- kill9: SIGKILL of the worker (all its processes) mid-evaluation; a fresh worker is started.
- sigstop: SIGSTOP of the pool child running the job; the reaper re-queues, another worker claims
  and runs it; SIGCONT: the woken worker must stop quietly (no failure, no overwrite).
- redis_outage: the broker is down at `POST /api/jobs/` (expect 503 with the job id), then comes
  back empty; the republish sweep must send the job.
- redis_restart: a job waits in the broker's queue (no free worker) when Redis restarts without
  persistence and loses it; the sweep must publish it again, and the job must run once.
- busy_queue: every job slot busy (long jobs running, more waiting), then SIGKILL of the worker of
  the evaluation: the reaper must re-queue it within JOB_STALE_SECONDS + 10 s.
- pg_outage: the database is stopped mid-evaluation for --pg-outage-seconds, then started.

Per scenario: trials, recovered, lost and duplicated games, seconds to recover (fault, or the
service's return, to the job running again under a new claim; busy_queue: to the re-queue), final
status right. Prints JSON and writes bench/results/faults.json."""

from __future__ import annotations

import argparse
import contextlib
import http.cookiejar
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "faults.json"
PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), Path("/usr/bin"))
PG_PORT, REDIS_PORT, WEB_PORT = 5499, 6399, 8099
STALE, HEARTBEAT, REAP, REPUBLISH = 15, 2, 2, 10
SCENARIOS = ("kill9", "sigstop", "redis_outage", "redis_restart", "busy_queue", "pg_outage")
USER, PASSWORD = "faults-researcher", "faults-password-1234"


class Lab:
    """The private services and the processes of one benchmark run; `close` removes everything."""

    def __init__(self, workdir: Path, words: int, samples: int):
        self.dir = workdir
        self.words, self.samples = words, samples
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}
        self.redis: subprocess.Popen | None = None
        self.pg_data = workdir / "pg"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "webapp.settings.local",
            "DEBUG": "false",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{PG_PORT}/faults",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{REDIS_PORT}/0",
            "REDIS_URL": "",
            "DATA_DIR": str(workdir / "data"),
            "JOB_STALE_SECONDS": str(STALE),
            "JOB_HEARTBEAT_SECONDS": str(HEARTBEAT),
            "JOB_REAP_SECONDS": str(REAP),
            "JOB_REPUBLISH_SECONDS": str(REPUBLISH),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        }

    # -- services --------------------------------------------------------------------------------
    def postgres_init(self) -> None:
        self.pg_data.mkdir()
        shutil.chown(self.pg_data, "postgres", "postgres")
        self._as_postgres(
            [str(PG_BIN / "initdb"), "-D", str(self.pg_data), "-A", "trust", "-U", "postgres"]
        )
        self.postgres_start()
        self._as_postgres(
            [
                str(PG_BIN / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(PG_PORT),
                "-U",
                "postgres",
                "faults",
            ]
        )

    def postgres_start(self) -> None:
        self._as_postgres(
            [
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(self.pg_data),
                "-l",
                str(self.pg_data / "log"),
                "-o",
                f"-p {PG_PORT} -k {self.pg_data} -c listen_addresses=127.0.0.1",
                "-w",
                "start",
            ]
        )

    def postgres_stop(self) -> None:
        self._as_postgres(
            [str(PG_BIN / "pg_ctl"), "-D", str(self.pg_data), "-m", "fast", "-w", "stop"]
        )

    @staticmethod
    def _as_postgres(cmd: list[str]) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *cmd], check=True, capture_output=True, timeout=120
        )

    def redis_start(self) -> None:
        """A fresh, empty redis-server without persistence (a restart loses every message)."""
        self.redis = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(REDIS_PORT),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: _redis_ping(), 20, "redis to start")

    def redis_stop(self) -> None:
        if self.redis and self.redis.poll() is None:
            self.redis.kill()
            self.redis.wait(10)

    # -- processes -------------------------------------------------------------------------------
    def start(self, name: str, cmd: list[str], ready: str) -> subprocess.Popen:
        log = self.dir / f"{name}-{time.monotonic_ns()}.log"
        self.logs[name] = log
        with open(log, "w") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(
                cmd,
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs[name] = proc
        wait_for(
            lambda: ready in log.read_text(errors="replace") or proc.poll() is not None,
            90,
            f"{name} ready",
        )
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited: {log.read_text(errors='replace')[-3000:]}")
        return proc

    def celery_worker(self, name: str, queues: str, *options: str) -> subprocess.Popen:
        """A Celery worker consuming `queues`, with `options` for its pool and schedule."""
        return self.start(
            name,
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "workers.celery:app",
                "worker",
                "-Q",
                queues,
                *options,
                "--without-gossip",
                "--without-mingle",
                "-l",
                "INFO",
                "--hostname",
                f"{name}@%h",
            ],
            " ready.",
        )

    def worker(self, name: str, queues: str = "cpu", concurrency: int = 1) -> subprocess.Popen:
        return self.celery_worker(name, queues, "--concurrency", str(concurrency))

    def housekeeping(self) -> subprocess.Popen:
        schedule = str(self.dir / "beat-schedule")
        return self.celery_worker(
            "housekeeping", "housekeeping", "--pool", "solo", "-B", "--schedule", schedule
        )

    def web(self) -> subprocess.Popen:
        return self.start(
            "web",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "webapp.wsgi:application",
                "--bind",
                f"127.0.0.1:{WEB_PORT}",
                "--workers",
                "1",
                "--threads",
                "2",
            ],
            "Booting worker",
        )

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs.pop(name, None)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            if sig in (signal.SIGKILL, signal.SIGTERM):
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(10)

    def log_text(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace") if name in self.logs else ""

    def close(self, keep: bool = False) -> None:
        for name in list(self.procs):
            self.kill(name, signal.SIGKILL)
        self.redis_stop()
        if self.pg_data.exists():
            with contextlib.suppress(subprocess.CalledProcessError):
                self.postgres_stop()
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- jobs --------------------------------------------------------------------------------------
    def eval_params(self, seed: int) -> dict:
        return {
            "guesser": "infogain",
            "judge": "kb",
            "word_list": "dbrl/paper_test",
            "samples": self.samples,
            "limit": self.words,
            "batch_size": 2,
            "max_turns": 20,
            "seed": seed,
        }


def _redis_ping() -> bool:
    import redis

    try:
        return bool(redis.Redis(port=REDIS_PORT, socket_connect_timeout=0.5).ping())
    except redis.exceptions.RedisError:
        return False


def wait_for(predicate, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


def db(fn, default=None):
    """Run a read; a database that is down (or a dead connection) gives `default`, not a crash."""
    from django.db import Error, connection

    try:
        return fn()
    except Error:
        connection.close()
        return default


def job_state(job_id: int) -> dict:
    from webapp.jobs.models import Job

    return (
        db(
            lambda: (
                Job.objects.filter(pk=job_id)
                .values("status", "claim", "requeues", "error", "worker", "config")
                .first()
            ),
            {},
        )
        or {}
    )


def games_of(job_id: int) -> tuple[int, int]:
    """(games stored, distinct (word, sample) pairs among them)."""
    from webapp.play.models import Game

    rows = db(
        lambda: list(Game.objects.filter(job_id=job_id).values_list("secret", "sample_index")), []
    )
    return len(rows), len(set(rows))


def outcome(
    lab: Lab,
    job_id: int,
    t_fault: float,
    t_recovered: float | None,
    extra: dict | None = None,
    timeout: float = 240,
) -> dict:
    """Wait for the job to settle; count its games against what the evaluation should play."""
    with contextlib.suppress(TimeoutError):
        wait_for(
            lambda: job_state(job_id).get("status") in ("finished", "failed", "stopped"),
            timeout,
            f"job {job_id} to settle",
        )
    state = job_state(job_id)
    stored, distinct = games_of(job_id)
    from webapp.jobs.models import Job

    result = db(lambda: Job.objects.get(pk=job_id).result, {}) or {}
    expected = (lab.words - len(result.get("skipped_words", []))) * lab.samples
    record = {
        "job": job_id,
        "final_status": state.get("status"),
        "final_status_right": state.get("status") == "finished" and not state.get("error"),
        "expected_games": expected,
        "lost": max(expected - distinct, 0),
        "duplicated": stored - distinct,
        "claims": state.get("claim"),
        "seconds_to_recover": None if t_recovered is None else round(t_recovered - t_fault, 2),
        "seconds_to_finish": round(time.monotonic() - t_fault, 2),
        **(extra or {}),
    }
    record["recovered"] = bool(
        record["final_status_right"]
        and record["lost"] == 0
        and record["duplicated"] == 0
        and t_recovered is not None
        and record.get("within_target", True)
    )
    return record


def submit_eval(lab: Lab, seed: int) -> int:
    from webapp.jobs.services import job_submit

    return job_submit(kind="evaluation", params=lab.eval_params(seed)).pk


def wait_games(job_id: int, at_least: int, timeout: float = 180) -> None:
    wait_for(
        lambda: games_of(job_id)[1] >= at_least and job_state(job_id).get("status") == "running",
        timeout,
        f"job {job_id} to store {at_least} games",
    )


def wait_reclaimed(job_id: int, claim: int, timeout: float = 120) -> float | None:
    """When the job runs again under a later claim (or is finished by one), or None."""
    try:
        wait_for(
            lambda: (
                (s := job_state(job_id)).get("claim", 0) > claim
                and s.get("status") in ("running", "finished")
            ),
            timeout,
            f"job {job_id} to be claimed again",
            interval=0.1,
        )
        return time.monotonic()
    except TimeoutError:
        return None


# -- scenarios --------------------------------------------------------------------------------
def scenario_kill9(lab: Lab, trial: int) -> dict:
    job_id = submit_eval(lab, 1000 + trial)
    wait_games(job_id, lab.words * lab.samples // 3)
    claim = job_state(job_id)["claim"]
    t_fault = time.monotonic()
    lab.kill("jobs-a", signal.SIGKILL)
    lab.worker("jobs-a")  # what a supervisor (compose restart, systemd) does
    return outcome(lab, job_id, t_fault, wait_reclaimed(job_id, claim))


def scenario_sigstop(lab: Lab, trial: int) -> dict:
    job_id = submit_eval(lab, 2000 + trial)
    wait_games(job_id, lab.words * lab.samples // 3)
    state = job_state(job_id)
    pid = int(
        state["worker"].rsplit(":", 1)[1]
    )  # worker_name(): host:native thread id = the pool child
    t_fault = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    try:
        t_back = wait_reclaimed(job_id, state["claim"], timeout=STALE + 60)
        # let the new claim store a batch (or finish) before the old one wakes
        if t_back is not None:
            played = games_of(job_id)[1]
            with contextlib.suppress(TimeoutError):
                wait_for(
                    lambda: (
                        games_of(job_id)[1] > played
                        or job_state(job_id).get("status") == "finished"
                    ),
                    60,
                    "the new claim to store games",
                )
    finally:
        os.kill(pid, signal.SIGCONT)
    record = outcome(lab, job_id, t_fault, t_back)
    try:  # the woken task ends with "superseded", not a failure
        wait_for(
            lambda: (
                f"job {job_id}: claim {state['claim']} was superseded"
                in lab.log_text("jobs-a") + lab.log_text("jobs-b")
            ),
            60,
            "the stale task to stop",
        )
        record["stale_worker_stopped_quietly"] = True
    except TimeoutError:
        record["stale_worker_stopped_quietly"] = False
    record["recovered"] = record["recovered"] and record["stale_worker_stopped_quietly"]
    return record


def scenario_redis_outage(
    lab: Lab, trial: int, session: urllib.request.OpenerDirector, csrf: str
) -> dict:
    lab.redis_stop()
    t_down = time.monotonic()
    status, body = api_post(
        session, csrf, "/api/jobs/", {"kind": "evaluation", "config": lab.eval_params(3000 + trial)}
    )
    seconds_to_answer = round(time.monotonic() - t_down, 2)
    job_id = body.get("id")
    state = job_state(job_id) if job_id else {}
    time.sleep(2)
    lab.redis_start()  # back, empty: nothing was persisted
    t_back = time.monotonic()
    extra = {
        "http_status": status,
        "seconds_to_answer": seconds_to_answer,
        "queued_after_503": state.get("status") == "queued",
    }
    if job_id is None:
        return {
            "recovered": False,
            "lost": lab.words * lab.samples,
            "duplicated": 0,
            "final_status_right": False,
            **extra,
            "body": body,
        }
    record = outcome(lab, job_id, t_back, wait_reclaimed(job_id, 0, timeout=120), extra)
    record["recovered"] = record["recovered"] and status == 503 and extra["queued_after_503"]
    return record


def scenario_busy_queue(lab: Lab, trial: int) -> dict:
    """jobs-busy's two slots run long jobs, the evaluation runs on jobs-a, two more long jobs wait:
    every job slot is busy and the queue has a backlog when jobs-a is killed."""
    from webapp.jobs.models import Job
    from webapp.jobs.services import job_cancel, job_submit

    def long_job() -> int:
        return job_submit(kind="smoke", params={"steps": 10_000, "seconds_per_step": 0.05}).pk

    lab.kill("jobs-a", signal.SIGTERM)  # idle: the long jobs must land on jobs-busy only
    if "jobs-busy" not in lab.procs:
        lab.worker("jobs-busy", concurrency=2)
    busy = [long_job(), long_job()]
    wait_for(
        lambda: Job.objects.filter(pk__in=busy, status="running").count() == 2,
        90,
        "jobs-busy's slots",
    )
    job_id = submit_eval(lab, 4000 + trial)
    lab.worker("jobs-a")
    wait_games(job_id, lab.words * lab.samples // 4)
    busy += [long_job(), long_job()]  # the backlog
    state = job_state(job_id)
    t_fault = time.monotonic()
    lab.kill("jobs-a", signal.SIGKILL)
    try:
        wait_for(
            lambda: job_state(job_id).get("requeues", 0) > state["requeues"],
            STALE + 60,
            "the reaper to re-queue",
            interval=0.1,
        )
        t_requeued = time.monotonic()
    except TimeoutError:
        t_requeued = None
    slots = Job.objects.filter(pk__in=busy, status="running").count()
    backlog = Job.objects.filter(pk__in=busy, status="queued").count()
    for pk in busy:  # free the slots so the evaluation can finish
        job_cancel(job=Job.objects.get(pk=pk))
    lab.worker("jobs-a")
    seconds = None if t_requeued is None else t_requeued - t_fault
    extra = {
        "busy_slots_at_requeue": slots,
        "backlog_at_requeue": backlog,
        "target_seconds": STALE + 10,
        "within_target": seconds is not None and seconds <= STALE + 10,
    }
    record = outcome(lab, job_id, t_fault, t_requeued, extra)
    wait_for(
        lambda: not Job.objects.filter(pk__in=busy, status__in=["running", "stopping"]).exists(),
        60,
        "the long jobs to stop",
    )
    return record


def scenario_redis_restart(lab: Lab, trial: int) -> dict:
    from webapp.jobs.models import Job
    from webapp.jobs.services import broker_holds

    lab.kill("jobs-a", signal.SIGTERM)  # no worker: the message waits in Redis
    job_id = submit_eval(lab, 6000 + trial)
    job = Job.objects.get(pk=job_id)
    held_before = broker_holds(job.queue, job.task_id)
    lab.redis_stop()
    lab.redis_start()  # empty: the waiting message is gone
    t_fault = time.monotonic()
    held_after = broker_holds(job.queue, job.task_id)
    lab.worker("jobs-a")
    t_claimed = wait_reclaimed(job_id, 0, timeout=REPUBLISH + 90)
    extra = {"message_held_before": held_before, "message_held_after_restart": held_after}
    record = outcome(lab, job_id, t_fault, t_claimed, extra)
    record["recovered"] = record["recovered"] and held_before and not held_after
    return record


def scenario_pg_outage(lab: Lab, trial: int, outage: float) -> dict:
    job_id = submit_eval(lab, 5000 + trial)
    wait_games(job_id, lab.words * lab.samples // 3)
    claim = job_state(job_id)["claim"]
    t_fault = time.monotonic()
    lab.postgres_stop()
    time.sleep(outage)
    lab.postgres_start()
    t_back = time.monotonic()
    record = outcome(
        lab,
        job_id,
        t_back,
        wait_reclaimed(job_id, claim, timeout=STALE + 90),
        {"outage_seconds": round(t_back - t_fault, 2)},
    )
    return record


# -- HTTP -------------------------------------------------------------------------------------
def login() -> tuple[urllib.request.OpenerDirector, str]:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    base = f"http://127.0.0.1:{WEB_PORT}"
    opener.open(f"{base}/accounts/login/", timeout=30).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    data = urllib.parse.urlencode(
        {"username": USER, "password": PASSWORD, "csrfmiddlewaretoken": csrf}
    ).encode()
    opener.open(
        urllib.request.Request(f"{base}/accounts/login/", data=data, headers={"Referer": base}),
        timeout=30,
    ).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    if not any(c.name == "sessionid" for c in jar):
        raise RuntimeError("could not log in to the web app")
    return opener, csrf


def api_post(opener, csrf: str, path: str, payload: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{WEB_PORT}{path}",
        data=json.dumps(payload).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "X-CSRFToken": csrf,
            "Referer": f"http://127.0.0.1:{WEB_PORT}",
        },
    )
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, {"raw": body[:300].decode(errors="replace")}


# -- the run ----------------------------------------------------------------------------------
def summarise(records: list[dict]) -> dict:
    seconds = [r["seconds_to_recover"] for r in records if r.get("seconds_to_recover") is not None]
    return {
        "trials": len(records),
        "recovered": sum(bool(r.get("recovered")) for r in records),
        "lost": sum(r.get("lost", 0) for r in records),
        "duplicated": sum(r.get("duplicated", 0) for r in records),
        "final_status_right": sum(bool(r.get("final_status_right")) for r in records),
        "seconds_to_recover": {
            "median": round(statistics.median(seconds), 2) if seconds else None,
            "max": max(seconds) if seconds else None,
        },
        "runs": records,
    }


def setup(lab: Lab) -> None:
    lab.postgres_init()
    lab.redis_start()
    os.environ.update(lab.env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    call_command("seed", verbosity=0)
    call_command("create_user", USER, password=PASSWORD, role=["researcher"], verbosity=0)


def run(args) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="twentyq-faults-", dir="/tmp"))
    os.chmod(workdir, 0o755)
    lab = Lab(workdir, words=args.words, samples=args.samples)
    results: dict = {
        "settings": {
            "JOB_STALE_SECONDS": STALE,
            "JOB_HEARTBEAT_SECONDS": HEARTBEAT,
            "JOB_REAP_SECONDS": REAP,
            "JOB_REPUBLISH_SECONDS": REPUBLISH,
            "games_per_job": args.words * args.samples,
        }
    }
    try:
        setup(lab)
        lab.housekeeping()
        lab.worker("jobs-a")
        for name in args.scenarios:
            t0 = time.monotonic()
            records = []
            if name == "sigstop":
                lab.worker("jobs-b")
            session = None
            if name == "redis_outage":
                lab.web()
                session = login()
            for trial in range(args.trials):
                try:
                    if name == "redis_outage":
                        record = scenario_redis_outage(lab, trial, *session)
                    elif name == "pg_outage":
                        record = scenario_pg_outage(lab, trial, args.pg_outage_seconds)
                    else:
                        record = globals()[f"scenario_{name}"](lab, trial)
                except (
                    Exception
                ) as exc:  # a trial that could not even be set up counts as not recovered
                    record = {"recovered": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
                records.append(record)
                print(
                    json.dumps({"scenario": name, "trial": trial, **record}),
                    file=sys.stderr,
                    flush=True,
                )
            for extra in ("jobs-b", "jobs-busy", "web"):
                lab.kill(extra, signal.SIGTERM)
            if "jobs-a" not in lab.procs:
                lab.worker("jobs-a")
            results[name] = {**summarise(records), "seconds": round(time.monotonic() - t0, 1)}
    finally:
        lab.close(keep=args.keep)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), type=lambda s: [x for x in s.split(",") if x]
    )
    parser.add_argument("--words", type=int, default=30, help="words per evaluation job")
    parser.add_argument("--samples", type=int, default=2, help="games per word")
    parser.add_argument("--pg-outage-seconds", type=float, default=15.0)
    parser.add_argument(
        "--keep", action="store_true", help="keep the work folder (logs) under /tmp"
    )
    parser.add_argument(
        "--no-save", action="store_true", help="print only; do not write bench/results/faults.json"
    )
    args = parser.parse_args()
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios {sorted(unknown)}; known: {', '.join(SCENARIOS)}")
    results = run(args)
    print(json.dumps(results, indent=2))
    if not args.no_save:  # scenarios not run this time keep their earlier results
        saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        settings = {**saved.get("settings", {}), **results.pop("settings")}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps({**saved, **results, "settings": settings}, indent=2) + "\n")


if __name__ == "__main__":
    main()
