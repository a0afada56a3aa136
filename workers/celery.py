"""The Celery app: job queues `cpu` and `gpu`, and `housekeeping` (reaper, republish sweep,
leaderboard refresh) for its own worker process; JSON only, late acks, prefetch 1, time limits.

All CELERY_* values live in Django settings (infrastructure from the environment).
"""

import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.local")
# One BLAS thread per worker process: multi-threaded BLAS on small vectors is far slower on 2 cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

app = Celery("twentyq")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = (Queue("cpu"), Queue("gpu"), Queue("housekeeping"))
app.autodiscover_tasks(["workers"], related_name="tasks")
