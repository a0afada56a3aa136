"""Where tests hold the web app's Celery messages: every task leaves the web app through
webapp.core.sending.send_task (by name: jobs.run, leaderboards.refresh), so patching that one
function catches them all. `tasks_held()` yields the mock (called as send_task(name, kwargs=...,
queue=..., task_id=...)); the `no_queue` fixture (tests/conftest.py) holds them for a whole test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

SEND_TASK = "webapp.core.sending.send_task"


@contextmanager
def tasks_held(**patch_options) -> Iterator[mock.MagicMock]:
    """Record the messages instead of publishing them (`side_effect=` makes the broker fail)."""
    with mock.patch(SEND_TASK, **patch_options) as send:
        yield send
