from __future__ import annotations

import pytest

from tests.webapp.labelling.support import run_disagreements, store_games


@pytest.fixture
def games(db):
    return store_games()


@pytest.fixture
def queued(games):
    """The four kb / kb-any-sense disagreements queued, no controls, three labels each."""
    return run_disagreements(controls=0.0)
