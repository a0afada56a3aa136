"""A cap on login attempts per address (the form and the API token login), across usernames:
django-axes locks a username out from an address, this bounds the password hashing (hundreds of
milliseconds of CPU each) one address can cause by trying many usernames."""

from __future__ import annotations

import functools

from django.conf import settings
from django.shortcuts import render

from webapp.accounts.services import client_ip
from webapp.core.ratelimit import RateLimitUnavailable, window_hit

TOO_MANY_LOGINS = "Too many login attempts from your address: wait a minute and try again."
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """'30/minute' -> (30, 60)."""
    count, _, period = rate.partition("/")
    return int(count), PERIODS[period.strip()[:1]]


def login_attempt_allowed(request) -> bool:
    """Count one login attempt from this request's address. When the cache is down the attempt is
    let through: axes' lockout (kept in the database) still holds."""
    if not settings.LOGIN_RATE:
        return True
    limit, duration = parse_rate(settings.LOGIN_RATE)
    try:
        allowed, _ = window_hit("login", client_ip(request), limit, duration)
    except RateLimitUnavailable:
        return True
    return allowed


def login_rate_limited(view):
    """Wrap a login view: a POST over the address's limit gets a 429 page before any hashing."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method == "POST" and not login_attempt_allowed(request):
            return render(
                request, "accounts/too_many_logins.html", {"message": TOO_MANY_LOGINS}, status=429
            )
        return view(request, *args, **kwargs)

    return wrapped
