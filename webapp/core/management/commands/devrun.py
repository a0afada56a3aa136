"""`make run`: the web app under gunicorn, a job worker, a housekeeping worker (with the beat) and a
leaderboards worker in the foreground; one ready line once all answer; a process that exits is
started again (at most MAX_RESTARTS within RESTART_WINDOW seconds); Ctrl-C stops them all. DEBUG
stays off unless --debug (or DEBUG=true) asks."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import deque
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

MAX_RESTARTS = 5  # per process, within RESTART_WINDOW; then it is left stopped (web: all stop)
RESTART_WINDOW = 300.0
READY_TIMEOUT = 180.0  # after this, say which part has not answered yet
WHAT = {
    "web": "the web server",
    "jobs": "the job worker",
    "housekeeping": "the housekeeping worker",
    "leaderboards": "the leaderboards worker",
}


def commands(
    addr: str, *, web_workers: int = 2, web_threads: int = 4, python: str = sys.executable
) -> dict:
    """The four processes: gunicorn (static files through whitenoise), a worker on the job
    queues, one on the housekeeping queue that also runs the beat (so reaping never waits behind
    a busy job slot) and one on the leaderboards queue (so a refresh never delays reaping)."""
    celery = [python, "-m", "celery", "-A", "workers.celery:app", "worker", "--loglevel", "INFO"]
    return {
        "web": [
            python,
            "-m",
            "gunicorn",
            "webapp.wsgi:application",
            "--bind",
            addr,
            "--workers",
            str(web_workers),
            "--threads",
            str(web_threads),
            "--timeout",
            "60",
            "--graceful-timeout",
            "10",
            "--access-logfile",
            "-",
        ],
        "jobs": [*celery, "-Q", "cpu,gpu", "--concurrency", "1", "--hostname", "jobs@%h"],
        "housekeeping": [
            *celery,
            "-Q",
            settings.HOUSEKEEPING_QUEUE,
            "--pool",
            "solo",
            "-B",
            "--hostname",
            "housekeeping@%h",
            "--schedule",
            str(settings.DATA_DIR / "celerybeat-schedule"),
        ],
        "leaderboards": [
            *celery,
            "-Q",
            settings.LEADERBOARDS_QUEUE,
            "--pool",
            "solo",
            "--hostname",
            "leaderboards@%h",
        ],
    }


def environment(debug: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["DEBUG"] = "true" if debug else "false"
    return env


def health_url(addr: str) -> str | None:
    """Where to ask the web server whether it answers (None for a unix socket)."""
    if addr.startswith("unix:"):
        return None
    host, _, port = addr.rpartition(":")
    if host in ("", "0.0.0.0", "[::]", "::"):
        host = "127.0.0.1" if host in ("", "0.0.0.0") else "[::1]"
    return f"http://{host}:{port}/healthz"


def web_answers(url: str | None) -> bool:
    if url is None:
        return True
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - our own address
            return response.status == 200
    except OSError:
        return False


class Supervisor:
    """Starts the processes, restarts one that exits (a bounded number of times, with a log line)
    and tells when all of them answer."""

    def __init__(
        self,
        cmds: dict[str, list[str]],
        env: dict[str, str],
        *,
        ready_dir: Path,
        web_ready: Callable[[], bool] = lambda: True,
        say: Callable[[str], None] = print,
        max_restarts: int = MAX_RESTARTS,
        window: float = RESTART_WINDOW,
    ):
        self.cmds, self.env, self.ready_dir = cmds, env, ready_dir
        self.web_ready, self.say = web_ready, say
        self.max_restarts, self.window = max_restarts, window
        self.procs: dict[str, subprocess.Popen] = {}
        self.restarts: dict[str, deque[float]] = {name: deque() for name in cmds}
        self.given_up: set[str] = set()
        self.stopping = False

    def ready_file(self, name: str) -> Path:
        return self.ready_dir / f"{name}.ready"

    def start(self, name: str) -> None:
        env = {**self.env, "DEVRUN_READY_FILE": str(self.ready_file(name))}
        # its own process group: what it forked (the embedded beat) goes with it
        self.procs[name] = subprocess.Popen(self.cmds[name], env=env, start_new_session=True)

    @staticmethod
    def signal_group(proc: subprocess.Popen, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def start_all(self) -> None:
        for name in self.cmds:
            self.start(name)

    def check(self) -> bool:
        """Restart whatever exited; False once the site cannot go on (the web server gave up)."""
        now = time.monotonic()
        for name, proc in list(self.procs.items()):
            code = proc.poll()
            if code is None or name in self.given_up or self.stopping:
                continue
            recent = self.restarts[name]
            while recent and now - recent[0] > self.window:
                recent.popleft()
            what = WHAT.get(name, name)
            if len(recent) >= self.max_restarts:
                self.given_up.add(name)
                self.say(
                    f"devrun: {what} exited (code {code}) {len(recent) + 1} times within "
                    f"{self.window:.0f} s; not restarting it"
                    + ("" if name != "web" else ", so everything stops")
                )
                if name == "web":
                    return False
                continue
            self.signal_group(proc, signal.SIGKILL)  # a child it left behind (a second beat)
            recent.append(now)
            self.say(f"devrun: {what} exited (code {code}); restarting it")
            self.ready_file(name).unlink(missing_ok=True)
            self.start(name)
        return True

    def ready(self) -> bool:
        workers = [n for n in self.cmds if n != "web" and n not in self.given_up]
        return all(self.ready_file(n).exists() for n in workers) and self.web_ready()

    def waiting_for(self) -> list[str]:
        missing = [
            WHAT.get(n, n) for n in self.cmds if n != "web" and not self.ready_file(n).exists()
        ]
        return (["the web server"] if "web" in self.cmds and not self.web_ready() else []) + missing

    def stop(self, grace: float = 15.0) -> None:
        for proc in self.procs.values():
            self.signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self.signal_group(proc, signal.SIGKILL)  # anything of its group still there


def ready_line(addr: str, *, debug: bool, web_workers: int) -> str:
    database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    broker = settings.CELERY_BROKER_URL.split("://", 1)[0]
    return (
        f"20Q Lab is ready: http://{addr}/  — web (gunicorn, {web_workers} workers, DEBUG "
        f"{'on' if debug else 'off'}), job worker, housekeeping worker with the beat, leaderboards "
        f"worker; {database} database, {broker} broker. Ctrl-C stops them all."
    )


class Command(BaseCommand):
    help = (
        "Start the web app (gunicorn) on 127.0.0.1:8000 (RUN_ADDR or --addr to change), a job "
        "worker, a housekeeping worker and a leaderboards worker."
    )

    def add_arguments(self, parser):
        parser.add_argument("--addr", default=os.environ.get("RUN_ADDR", "127.0.0.1:8000"))
        parser.add_argument(
            "--debug",
            action="store_true",
            default=os.environ.get("DEBUG", "").lower() in ("1", "true", "yes", "on"),
            help="DEBUG on (tracebacks in the browser); off by default",
        )
        parser.add_argument(
            "--web-workers",
            type=int,  # parses the default too: a bad WEB_CONCURRENCY is a usage error
            default=os.environ.get("WEB_CONCURRENCY", "2"),
        )

    def handle(self, *args, addr: str, debug: bool, web_workers: int, **options):
        def say(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()

        say("20Q Lab: starting the web server and the workers…")
        url = health_url(addr)
        with tempfile.TemporaryDirectory(prefix="devrun-") as ready_dir:
            supervisor = Supervisor(
                commands(addr, web_workers=web_workers),
                environment(debug),
                ready_dir=Path(ready_dir),
                web_ready=lambda: web_answers(url),
                say=say,
            )

            def stop(*_):
                supervisor.stopping = True

            # the children have sessions of their own: a closed terminal (SIGHUP) reaches only us
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, stop)
            supervisor.start_all()
            started, announced, warned = time.monotonic(), False, False
            try:
                while not supervisor.stopping and supervisor.check():
                    if not announced and supervisor.ready():
                        say(ready_line(addr, debug=debug, web_workers=web_workers))
                        announced = True
                    elif (
                        not announced and not warned and time.monotonic() - started > READY_TIMEOUT
                    ):
                        say(f"devrun: still waiting for {', '.join(supervisor.waiting_for())}")
                        warned = True
                    time.sleep(0.5)
            finally:
                supervisor.stop()
        say("stopped the web app and the workers")
