"""A cap on login attempts per address (the form and the API token login), across usernames:
django-axes locks a username out from an address, this bounds the password hashing (hundreds of
milliseconds of CPU each) one address can cause by trying many usernames; and one address has one
attempt checked at a time, so parallel tries (six threads of them) cannot take every core from the
site's pages."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from django.conf import settings
from django.core.cache import cache
from django.shortcuts import render

from webapp.accounts.services import client_ip
from webapp.core.ratelimit import RateLimitUnavailable, window_hit

TOO_MANY_LOGINS = "Too many login attempts from your address: wait a minute and try again."
LOGIN_IN_FLIGHT = "Another login from your address is being checked: try again in a moment."
IN_FLIGHT_SECONDS = 30  # an attempt whose process died frees its address after this
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


@contextmanager
def login_in_flight(request) -> Iterator[bool]:
    """Whether this is the only login attempt from its address being checked now (held until the
    block ends). Across processes where the cache is Redis; per process with the embedded memory
    cache; when the cache is down the attempt is let through."""
    key = f"login-in-flight:{client_ip(request)}"
    try:
        mine = cache.add(key, 1, timeout=IN_FLIGHT_SECONDS)
    except Exception:  # the cache server is down: LOGIN_RATE lets it through too
        mine = None
    try:
        yield mine is not False
    finally:
        if mine:
            with suppress(Exception):
                cache.delete(key)


def login_refusal(request) -> str | None:
    """Why a login attempt is refused before any hashing (call inside `login_in_flight`)."""
    return None if login_attempt_allowed(request) else TOO_MANY_LOGINS


def login_rate_limited(view):
    """Wrap a login view: a POST over the address's limit, or while another from the address is
    being checked, gets a 429 page before any hashing."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method != "POST":
            return view(request, *args, **kwargs)
        with login_in_flight(request) as alone:
            refusal = LOGIN_IN_FLIGHT if not alone else login_refusal(request)
            if refusal:
                return render(
                    request, "accounts/too_many_logins.html", {"message": refusal}, status=429
                )
            return view(request, *args, **kwargs)

    return wrapped
