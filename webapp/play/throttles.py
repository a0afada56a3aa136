"""The guest rate limit (scope `guest_play`), shared by the API and the htmx views through the cache."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle

GUEST_LIMIT_MESSAGE = "Guests may play only so fast. Wait a minute, or sign in to play without a limit."


class GuestPlayThrottle(AnonRateThrottle):
    """Limits guests by IP; signed-in players are not limited (their cache key is None)."""

    scope = "guest_play"

    def get_rate(self) -> str | None:
        # Read the setting on every request so that override_settings and the env take effect.
        return settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {}).get(self.scope)


def guest_may_play(request) -> bool:
    """The same limit for the HTML views: True if this request may start a game or submit a turn."""
    return GuestPlayThrottle().allow_request(request, None)
