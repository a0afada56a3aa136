"""Start a real Celery worker process against the test database and a chosen broker."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from django.db import connection

from bench.faults.processes import celery_worker_command, wait_for

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    return (
        f"postgres://{s['USER']}:{s['PASSWORD']}"
        f"@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
    )


def filesystem_transport_options(data_dir: Path) -> dict:
    folder = data_dir / "broker" / "queue"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("processed", "control"):
        (data_dir / "broker" / name).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "control_folder": str(data_dir / "broker" / "control"),
    }


class WorkerProcess:
    def __init__(
        self,
        broker_url: str,
        data_dir: Path,
        log_path: Path,
        queues: str = "cpu",
        purge: bool = True,
    ):
        env = dict(os.environ)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "webapp.settings.test",
                "DATABASE_URL": test_database_url(),
                "CELERY_BROKER_URL": broker_url,
                "DATA_DIR": str(data_dir),
                "JOB_HEARTBEAT_SECONDS": "1",
            }
        )
        self.log_path = log_path
        self._log = open(log_path, "w")  # noqa: SIM115 - the worker's stdout; closed in stop()
        self.proc = subprocess.Popen(
            celery_worker_command(
                queues,
                f"test-{os.getpid()}-{time.monotonic_ns()}@%h",
                "--pool",
                "solo",
                "--concurrency",
                "1",
                "--without-heartbeat",
                *(["--purge"] if purge else []),
            ),
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self) -> WorkerProcess:
        wait_for(
            lambda: " ready." in self.log() or self.proc.poll() is not None,
            timeout=60,
            what="the worker to be ready",
        )
        assert self.proc.poll() is None, self.log()
        return self

    def kill(self, sig: int) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._log.close()


@pytest.fixture
def start_worker(tmp_path):
    workers: list[WorkerProcess] = []

    def start(broker_url: str, data_dir: Path | None = None, purge: bool = True) -> WorkerProcess:
        """A worker; by default it first purges messages left over from earlier runs."""
        worker = WorkerProcess(
            broker_url, data_dir or tmp_path, tmp_path / f"worker-{len(workers)}.log", purge=purge
        )
        workers.append(worker)
        return worker.wait_ready()

    yield start
    for w in workers:
        w.stop()
