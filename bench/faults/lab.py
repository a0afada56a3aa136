"""The benchmark's private services (a Postgres cluster and a redis-server under /tmp, on free ports
taken at start) and the processes it starts on them: Celery workers, the housekeeping beat,
gunicorn. Every one runs in its own process group, so none sees the terminal's Ctrl-C; `close`
(run on any exit, see __main__.interruptible) stops each group and the cluster."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench.faults.processes import celery_worker_command, wait_for

ROOT = Path(__file__).resolve().parents[2]
PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), Path("/usr/bin"))
STALE, HEARTBEAT, REAP, REPUBLISH = 15, 2, 2, 10
USER, PASSWORD = "faults-researcher", "faults-password-1234"  # the researcher the lab creates


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Lab:
    """The private services and the processes of one benchmark run; `close` removes everything."""

    def __init__(self, workdir: Path, words: int, samples: int):
        self.dir = workdir
        self.words, self.samples = words, samples
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}
        self.redis: subprocess.Popen | None = None
        self.pg_data = workdir / "pg"
        self.pg_port, self.redis_port, self.web_port = free_port(), free_port(), free_port()
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "webapp.settings.local",
            "DEBUG": "false",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{self.pg_port}/faults",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{self.redis_port}/0",
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
                str(self.pg_port),
                "-U",
                "postgres",
                "faults",
            ]
        )

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def _claim(self, port: int, what: str) -> None:
        if not port_free(port):
            raise RuntimeError(f"port {port} on 127.0.0.1 (the lab's {what}) is busy")

    def postgres_start(self) -> None:
        self._claim(self.pg_port, "Postgres")
        self._as_postgres(
            [
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(self.pg_data),
                "-l",
                str(self.pg_data / "log"),
                "-o",
                f"-p {self.pg_port} -k {self.pg_data} -c listen_addresses=127.0.0.1",
                "-w",
                "start",
            ]
        )

    def postgres_stop(self, mode: str = "fast") -> None:
        self._as_postgres(
            [str(PG_BIN / "pg_ctl"), "-D", str(self.pg_data), "-m", mode, "-w", "stop"]
        )

    @staticmethod
    def _as_postgres(cmd: list[str]) -> None:
        # a session of its own: the postmaster pg_ctl starts is out of reach of the terminal's
        # Ctrl-C and of `timeout`'s group signal (a smart shutdown would wait on the workers)
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *cmd],
            check=True,
            capture_output=True,
            timeout=120,
            start_new_session=True,
        )

    def redis_start(self) -> None:
        """A fresh, empty redis-server without persistence (a restart loses every message)."""
        self._claim(self.redis_port, "redis-server")
        self.redis = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.redis_port),
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
            start_new_session=True,
        )
        wait_for(lambda: _redis_ping(self.redis_port), 20, "redis to start")

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
        try:
            wait_for(
                lambda: ready in log.read_text(errors="replace") or proc.poll() is not None,
                90,
                f"{name} ready",
            )
        except TimeoutError as exc:  # what it was doing: importing, connecting, retrying ...
            tail = log.read_text(errors="replace")[-1500:]
            raise TimeoutError(f"{exc}; its log ends:\n{tail}") from None
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited: {log.read_text(errors='replace')[-3000:]}")
        return proc

    def celery_worker(self, name: str, queues: str, *options: str) -> subprocess.Popen:
        """A Celery worker consuming `queues`, with `options` for its pool and schedule."""
        return self.start(name, celery_worker_command(queues, f"{name}@%h", *options), " ready.")

    def worker(self, name: str, queues: str = "cpu", concurrency: int = 1) -> subprocess.Popen:
        return self.celery_worker(name, queues, "--concurrency", str(concurrency))

    def housekeeping(self) -> subprocess.Popen:
        schedule = str(self.dir / "beat-schedule")
        return self.celery_worker(
            "housekeeping", "housekeeping", "--pool", "solo", "-B", "--schedule", schedule
        )

    def web(self) -> subprocess.Popen:
        self._claim(self.web_port, "web server")
        return self.start(
            "web",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "webapp.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.web_port}",
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
        """Stop every process group, redis-server and the cluster, then remove the folder."""
        for name in list(self.procs):
            self.kill(name, signal.SIGKILL)
        self.redis_stop()
        if (self.pg_data / "postmaster.pid").exists():
            for mode in ("fast", "immediate"):
                with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
                    self.postgres_stop(mode)
                    break
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


def _redis_ping(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(port=port, socket_connect_timeout=0.5).ping())
    except redis.exceptions.RedisError:
        return False
