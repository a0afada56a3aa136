"""The Celery app: job queues `cpu` and `gpu`, `housekeeping` (reaper, republish sweep) and
`leaderboards` (board refreshes), each for its own worker process; JSON only, late acks,
prefetch 1, time limits.

All CELERY_* values live in Django settings (infrastructure from the environment).
"""

import logging
import os
import re
from pathlib import Path

from celery import Celery
from celery.signals import worker_ready
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.local")
# One BLAS thread per worker process: multi-threaded BLAS on small vectors is far slower on 2 cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

app = Celery("twentyq")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = (Queue("cpu"), Queue("gpu"), Queue("housekeeping"), Queue("leaderboards"))
app.autodiscover_tasks(["workers"], related_name="tasks")

# The sweeps that run every few seconds: their "received", "succeeded", beat "sending" and expired
# "discarding" lines are DEBUG unless the sweep did something (its result names a job id).
QUIET_TASKS = frozenset({"jobs.reap_stale", "jobs.republish_lost"})


class QuietSweeps(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        data = getattr(record, "data", None)  # celery's trace and strategy pass their context
        if isinstance(data, dict):
            task, result = data.get("name"), data.get("return_value")
        elif isinstance(record.args, tuple):  # 'Sending due task %s (%s)', 'Discarding … %s[%s]'
            task = next((a for a in record.args if isinstance(a, str) and a in QUIET_TASKS), None)
            result = None
        else:
            return True
        if task not in QUIET_TASKS or (result is not None and re.search(r"\d", str(result))):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


for _name in ("celery.app.trace", "celery.worker.strategy", "celery.worker.request", "celery.beat"):
    logging.getLogger(_name).addFilter(QuietSweeps())


@worker_ready.connect
def _tell_devrun(**_):
    """`manage.py devrun` prints its ready line once every worker has touched its file."""
    if path := os.environ.get("DEVRUN_READY_FILE"):
        Path(path).touch()
