"""Tests: DATABASE_URL/REDIS_URL when given (CI: Postgres and Redis), else the embedded default.

Each test run gets its own DATA_DIR (inherited by the worker processes tests start), so
concurrent runs never share a SQLite file or broker folder.
"""

import os
from pathlib import Path
from urllib.parse import urlsplit

if not os.environ.get("DATA_DIR"):
    _run = os.environ.setdefault("TWENTYQ_TEST_RUN", str(os.getpid()))
    os.environ["DATA_DIR"] = str(Path(__file__).resolve().parents[2] / "var" / f"test-run-{_run}")


def _isolate_xdist_worker(worker: str) -> None:
    """Under pytest-xdist each worker (gw0, gw1, ...) gets its own DATA_DIR and Redis database
    (15, 14, ...), so one worker's purge or SQLite file never touches another's; pytest-django
    already gives each its own Postgres test database. Once per worker: the processes a test
    starts inherit the result and must not shift it again."""
    if os.environ.get("TWENTYQ_TEST_WORKER") == worker:
        return
    os.environ["TWENTYQ_TEST_WORKER"] = worker
    os.environ["DATA_DIR"] = f"{os.environ['DATA_DIR']}-{worker}"
    index = int(worker.removeprefix("gw") or 0)
    for var in ("REDIS_URL", "CELERY_BROKER_URL"):
        url = urlsplit(os.environ.get(var, ""))
        if url.scheme in ("redis", "rediss"):
            db = int(url.path.strip("/") or 0)
            os.environ[var] = url._replace(path=f"/{(db - index) % 16}").geturl()


if os.environ.get("PYTEST_XDIST_WORKER"):
    _isolate_xdist_worker(os.environ["PYTEST_XDIST_WORKER"])

from webapp.settings.base import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"guest_play": "10000/minute"}}  # noqa: F405
LOGIN_RATE = "10000/minute"  # tests that exercise it set their own

# A file-backed SQLite test database, so worker processes started by tests can share it.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-db.sqlite3")}  # noqa: F405
# In-process job runs in tests rarely need a heartbeat thread; worker processes started by tests
# get JOB_HEARTBEAT_SECONDS=1 from tests/workers/conftest.py, and the reaper calls 5 s silence
# stale.
JOB_HEARTBEAT_SECONDS = int(os.environ.get("JOB_HEARTBEAT_SECONDS", "60"))
JOB_STALE_SECONDS = 5
