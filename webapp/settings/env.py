"""Reading infrastructure settings from the environment with errors that name the variable."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()

DB_SCHEMES = {"sqlite", "postgres", "postgresql", "pgsql", "psql"}
BROKER_SCHEMES = {"redis", "rediss", "filesystem", "memory", "amqp", "sqla+sqlite"}


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
