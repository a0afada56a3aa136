"""Fixtures of the jobs tests: the seeded catalog the launch forms offer (`rclient`, a signed-in
researcher, and `no_queue`, a broker that is never reached, are tests/conftest.py's)."""

from __future__ import annotations

import pytest

from webapp.catalog.services import seed_model_specs, seed_word_lists


@pytest.fixture
def seeded(db):
    """The shipped word lists and the default model specs (the launch forms' choices)."""
    seed_word_lists()
    seed_model_specs()
