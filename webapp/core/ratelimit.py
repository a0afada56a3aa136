"""Fixed-window rate limits in the cache: one key per scope, client and window, created with
`cache.add` and counted with `cache.incr` (atomic on Redis, the cache whenever REDIS_URL is set;
under a lock in the per-process memory cache of the embedded default, so there per process)."""

from __future__ import annotations

import logging
import time

from django.core.cache import cache

logger = logging.getLogger(__name__)


class RateLimitUnavailable(Exception):
    """The cache that counts is down or unreachable."""


def clock() -> float:
    return time.time()


def window_hit(scope: str, ident: str, limit: int, duration: int) -> tuple[bool, float]:
    """Count one request of `ident` in `scope`: (allowed, seconds until the window ends)."""
    now = clock()
    window = int(now // duration)
    key = f"ratelimit:{scope}:{ident}:{window}"
    try:
        # The key outlives its window, so it cannot expire between add and incr while in use.
        cache.add(key, 0, timeout=2 * duration + 1)
        count = cache.incr(key)
    except Exception as exc:  # the cache server is down or unreachable
        logger.warning("rate limit %s unavailable: %s", scope, exc)
        raise RateLimitUnavailable(str(exc)) from exc
    return count <= limit, (window + 1) * duration - now


def window_reset(scope: str, ident: str, duration: int) -> None:
    """Forget the current (and previous) window's count of `ident` in `scope`."""
    window = int(clock() // duration)
    cache.delete_many([f"ratelimit:{scope}:{ident}:{w}" for w in (window - 1, window)])
