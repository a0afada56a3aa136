"""Fixtures for play: the registry and word list a game needs, and a known secret."""

from __future__ import annotations

import time

import pytest

from tests.webapp.play.support import clear_guest_limit, seed_play_catalog
from webapp.core import ratelimit
from webapp.play import services


@pytest.fixture
def catalog(db):
    seed_play_catalog()


@pytest.fixture(autouse=True)
def _empty_guest_limit(monkeypatch):
    # One fixed instant for the guest limit's windows: a test never straddles a window's end.
    instant = float(int(time.time() // 3600 * 3600) + 1)
    monkeypatch.setattr(ratelimit, "clock", lambda: instant)
    clear_guest_limit()
    yield
    clear_guest_limit()


@pytest.fixture
def fixed_secret(monkeypatch):
    """Make the server's word draw return a known word: fixed_secret("dog")."""

    def fix(word: str) -> None:
        monkeypatch.setattr(services, "draw_secret", lambda words, judge: word)

    return fix
