"""Web tests count rate limits from zero: every test gets a cache key prefix of its own. The Redis
cache of CI outlives a test and a run, and two runs within one rate window (a minute, an hour)
would otherwise share the counts of the addresses they both use."""

from __future__ import annotations

import uuid

import pytest
from django.conf import settings
from django.test import override_settings


@pytest.fixture(autouse=True)
def _cache_keys_of_this_test():
    # its own override (not the `settings` fixture), so a test's own settings are undone first
    caches = {
        name: {**conf, "KEY_PREFIX": uuid.uuid4().hex} for name, conf in settings.CACHES.items()
    }
    with override_settings(CACHES=caches):
        yield
