"""Fixtures of the jobs tests: the seeded catalog the launch forms offer and a broker that is
never reached (`rclient`, a signed-in researcher, is tests/conftest.py's)."""

from __future__ import annotations

from unittest import mock

import pytest

from webapp.catalog.services import seed_model_specs, seed_word_lists


@pytest.fixture
def seeded(db):
    """The shipped word lists and the default model specs (the launch forms' choices)."""
    seed_word_lists()
    seed_model_specs()


@pytest.fixture
def no_queue():
    with mock.patch("workers.tasks.job_run_task.apply_async") as apply_async:
        yield apply_async
