"""The guest rate limit (scope `guest_play`), shared by the API and the htmx views through the
cache.

A fixed-window counter (webapp.core.ratelimit). The client is the address DRF's `get_ident`
gives: REMOTE_ADDR, or with `NUM_PROXIES` (env TRUSTED_PROXIES) trusted proxies in front, the
address the nearest of them saw; X-Forwarded-For is ignored when none is trusted.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.throttling import AnonRateThrottle

from webapp.core.ratelimit import RateLimitUnavailable, window_hit, window_reset

GUEST_LIMIT_MESSAGE = (
    "Guests may play only so fast. Wait a minute, or sign in to play without a limit."
)
GUEST_LIMIT_UNAVAILABLE = (
    "Guest play is paused for a moment (the rate limiter cannot be reached). "
    "Try again shortly, or sign in to play."
)


class GuestLimitUnavailable(APIException):
    """The cache that counts guests is down: guests wait (503) rather than play uncounted."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = GUEST_LIMIT_UNAVAILABLE
    default_code = "guest_limit_unavailable"


class GuestPlayThrottle(AnonRateThrottle):
    """Limits guests by address; signed-in players are not limited (their cache key is None)."""

    scope = "guest_play"
    cache_format = "%(ident)s"

    def get_rate(self) -> str | None:
        # Read the setting on every request so that override_settings and the env take effect.
        return settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {}).get(self.scope)

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        ident = self.get_cache_key(request, view)
        if ident is None:
            return True
        try:
            allowed, self.seconds_left = window_hit(
                self.scope, ident, self.num_requests, self.duration
            )
        except RateLimitUnavailable as exc:
            raise GuestLimitUnavailable() from exc
        return allowed

    def wait(self) -> float:
        return self.seconds_left


def guest_may_play(request) -> bool:
    """The same limit for the HTML views: True if this request may start a game or submit a turn;
    raises GuestLimitUnavailable when the limit cannot be counted."""
    return GuestPlayThrottle().allow_request(request, None)


def guest_limit_reset(ident: str) -> None:
    """Forget the current window's count of one client address (tests, support)."""
    throttle = GuestPlayThrottle()
    if throttle.rate:
        window_reset(throttle.scope, ident, throttle.duration)
