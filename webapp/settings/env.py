"""Reading infrastructure settings from the environment with errors that name the variable."""

from __future__ import annotations

import zlib
from difflib import SequenceMatcher
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()

DB_SCHEMES = {"sqlite", "postgres", "postgresql", "pgsql", "psql"}
BROKER_SCHEMES = {"redis", "rediss", "filesystem", "memory", "amqp", "sqla+sqlite"}
KEY_ADVICE = "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`"


def require(name: str) -> str:
    value = env.str(name, default="").strip()
    if not value:
        raise ImproperlyConfigured(f"the environment variable {name} is required but not set")
    return value


def url_setting(name: str, default: str, schemes: set[str]) -> str:
    value = env.str(name, default=default).strip() or default
    scheme = urlsplit(value).scheme.lower()
    if not scheme or scheme not in schemes:
        raise ImproperlyConfigured(
            f"the environment variable {name}={value!r} is malformed: "
            f"expected a URL with one of the schemes {sorted(schemes)}"
        )
    return value


def database_setting(name: str, default: str) -> dict:
    url = url_setting(name, default, DB_SCHEMES)
    try:
        config = environ.Env.db_url_config(url)
    except Exception as exc:  # environ raises several types for bad URLs
        raise ImproperlyConfigured(f"the environment variable {name} is malformed: {exc}") from exc
    if config["ENGINE"].endswith("sqlite3"):
        Path(config["NAME"]).parent.mkdir(parents=True, exist_ok=True)
        config["OPTIONS"] = {
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000;"
            ),
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    else:
        config.setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=60))
        config["CONN_HEALTH_CHECKS"] = True
    return config


def int_setting(name: str, default: int) -> int:
    try:
        return env.int(name, default=default)
    except (ValueError, TypeError) as exc:
        raise ImproperlyConfigured(f"the environment variable {name} must be an integer") from exc


RATE_PERIODS = {"s", "sec", "second", "m", "min", "minute", "h", "hour", "d", "day"}


def rate_setting(name: str, default: str, *, allow_off: bool = False) -> str | None:
    """A rate such as '30/minute' (DRF's and the login cap's format), checked at start-up: a
    malformed one would otherwise pass start-up and turn every request it limits into a 500.
    With allow_off an empty value turns the limit off (None)."""
    value = env.str(name, default=default).strip()
    if not value and allow_off:
        return None
    count, _, period = value.partition("/")
    period = period.strip().lower()
    if not (
        count.strip().isdigit()
        and int(count) > 0
        and (period in RATE_PERIODS or period.rstrip("s") in RATE_PERIODS)
    ):
        raise ImproperlyConfigured(
            f"the environment variable {name}={value!r} is malformed: expected COUNT/PERIOD "
            "such as 30/minute (period: second, minute, hour or day)"
            + ("; empty turns the limit off" if allow_off else "")
        )
    return f"{int(count)}/{period}"  # DRF reads the period's first letter: no stray spaces


def _published_key_variant(value: str, published: str) -> bool:
    """The embedded key, Django's startproject prefix, or the embedded key with small edits (case,
    a few characters changed, added or removed, reversed). Random keys stay below a 0.31 ratio."""
    if value.lower().startswith("django-insecure"):
        return True
    published = published.lower()
    for candidate in (value.lower(), value.lower()[::-1]):
        match = SequenceMatcher(None, published, candidate, autojunk=False)
        longest = match.find_longest_match(0, len(published), 0, len(candidate)).size
        if match.ratio() >= 0.5 or longest >= 16:
            return True
    return False


def _low_entropy_reason(value: str) -> str | None:
    """Why a long key is still guessable, or None. Django's W009 counts only length and distinct
    characters, so 'abcde' * 10 passes it; zlib squeezes out repeats and runs (50 random hex
    characters keep at least ~39 bytes, the published alphabet twice keeps 29)."""
    if len(set(value)) < 10:
        return "fewer than 10 different characters"
    if len(zlib.compress(value.encode(), 9)) - 8 < 36:
        return "it repeats a short pattern or long runs"
    steps = sum(abs(ord(b) - ord(a)) <= 1 for a, b in zip(value, value[1:], strict=False))
    if steps > len(value) / 2:
        return "it is mostly runs of neighbouring characters such as abcd or 1234"
    return None


def strong_secret_key(value: str, *, published: str) -> str:
    """The key, if it is long, random-looking and not one published anywhere (this repo's
    `published` key, with or without small edits)."""
    if _published_key_variant(value, published):
        raise ImproperlyConfigured(
            "SECRET_KEY is (a variant of) a published development key; generate one with "
            f"{KEY_ADVICE}"
        )
    reason = "shorter than 50 characters" if len(value) < 50 else _low_entropy_reason(value)
    if reason:
        raise ImproperlyConfigured(
            f"SECRET_KEY is too weak ({reason}); generate one with {KEY_ADVICE}"
        )
    return value


def redis_setting(name: str, value: str) -> str:
    """Production's broker and cache: Redis (memory:// and filesystem:// never reach a worker on
    another process or host)."""
    if urlsplit(value).scheme.lower() not in ("redis", "rediss"):
        raise ImproperlyConfigured(
            f"{name}={value!r}: production needs a redis:// or rediss:// URL (workers on other "
            "processes and hosts never see memory:// or filesystem:// messages)"
        )
    return value
