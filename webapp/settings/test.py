"""Tests: DATABASE_URL/REDIS_URL when given (CI: Postgres and Redis), else the embedded default."""

from webapp.settings.base import *  # noqa: F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"guest_play": "10000/minute"}}  # noqa: F405

# A file-backed SQLite test database, so worker processes started by tests can share it.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-db.sqlite3")}  # noqa: F405
JOB_HEARTBEAT_SECONDS = 1
JOB_STALE_SECONDS = 5
