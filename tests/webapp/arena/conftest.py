from __future__ import annotations

import pytest

from tests.webapp.arena.support import seed_arena


@pytest.fixture
def arena(db):
    return seed_arena()
