"""Run the web app and one Celery worker (with its beat) in the foreground; Ctrl-C stops both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Start the web app on 127.0.0.1:8000 and a worker on the cpu and gpu queues."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default=os.environ.get("RUN_ADDR", "127.0.0.1:8000"))

    def handle(self, *args, addr: str, **options):
        env = dict(os.environ)
        python = sys.executable
        worker = [python, "-m", "celery", "-A", "workers.celery:app", "worker", "-Q", "cpu,gpu", "-B",
                  "--concurrency", "1", "--loglevel", "INFO", "--hostname", "embedded@%h",
                  "--schedule", str(settings.DATA_DIR / "celerybeat-schedule")]
        web = [python, "manage.py", "runserver", addr, "--noreload"]
        self.stdout.write(f"20Q Lab: http://{addr}/  (broker {settings.CELERY_BROKER_URL}, "
                          f"database {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}); Ctrl-C stops")
        procs = [subprocess.Popen(worker, env=env), subprocess.Popen(web, env=env)]
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
        self.stdout.write("stopped the web app and the worker")
