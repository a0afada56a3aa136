"""The Celery tasks the web app sends, by the names workers/tasks.py registers them under.

The web app never imports workers.tasks: those tasks call the web app's services, so importing
them here would close a circle (jobs → tasks → jobs). A message names its task; the worker that
takes it runs the task of that name. Tests hold every message at `send_task` (the `no_queue`
fixture, tests/sending.py).
"""

from __future__ import annotations

from workers.celery import app

JOB_RUN = "jobs.run"  # workers.tasks.job_run_task: run one job (kwargs: job_id)
LEADERBOARDS_REFRESH = "leaderboards.refresh"  # workers.tasks.leaderboards_refresh_task


def send_task(name: str, *, kwargs: dict | None = None, **options) -> None:
    """Publish one message for the task registered as `name` (options as Celery's apply_async:
    queue, task_id, ...; routes from CELERY_TASK_ROUTES apply). Raises what the broker raises."""
    app.send_task(name, kwargs=kwargs, **options)
