"""One caller at a time per key, across processes (the cache's atomic `add`): the others can wait
for the first one's result instead of doing the same costly work again."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.cache import cache

log = logging.getLogger(__name__)


@contextmanager
def single_flight(key: str, seconds: int) -> Iterator[bool]:
    """Yields whether this caller holds `key` (for at most `seconds`, should it never let go).
    Without the cache every caller holds it: the work is then merely done twice."""
    try:
        held = bool(cache.add(f"singleflight:{key}", 1, timeout=seconds))
    except Exception as exc:  # noqa: BLE001 - a cache outage must not refuse the work
        log.warning("single flight %s unavailable: %s", key, exc)
        yield True
        return
    try:
        yield held
    finally:
        if held:
            try:
                cache.delete(f"singleflight:{key}")
            except Exception as exc:  # noqa: BLE001 - it expires by itself
                log.warning("single flight %s not released: %s", key, exc)


def in_flight(key: str) -> bool:
    """Whether some caller holds `key` now (without the cache: no one can be waited for)."""
    try:
        return cache.get(f"singleflight:{key}") is not None
    except Exception as exc:  # noqa: BLE001 - a cache outage: nothing to wait for
        log.warning("single flight %s unavailable: %s", key, exc)
        return False
