"""`make run`: the web app under gunicorn, a job worker and a housekeeping worker (with the beat)
in the foreground; Ctrl-C stops all three. DEBUG stays off unless --debug (or DEBUG=true) asks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand


def commands(
    addr: str, *, web_workers: int = 2, web_threads: int = 4, python: str = sys.executable
) -> dict:
    """The three processes: gunicorn (static files through whitenoise), a worker on the job
    queues and one on the housekeeping queue that also runs the beat, so reaping never waits
    behind a busy job slot."""
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
    }


def environment(debug: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["DEBUG"] = "true" if debug else "false"
    return env


class Command(BaseCommand):
    help = "Start the web app (gunicorn) on 127.0.0.1:8000, a job worker and a housekeeping worker."

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
        env = environment(debug)
        self.stdout.write(
            f"20Q Lab: http://{addr}/  (gunicorn, DEBUG {'on' if debug else 'off'}, broker "
            f"{settings.CELERY_BROKER_URL}, database "
            f"{settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}); Ctrl-C stops"
        )
        procs = [
            subprocess.Popen(cmd, env=env)
            for cmd in commands(addr, web_workers=web_workers).values()
        ]
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and all(p.poll() is None for p in procs):
                time.sleep(0.5)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 15
            for p in procs:
                try:
                    p.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.kill()
        self.stdout.write("stopped the web app and the workers")
