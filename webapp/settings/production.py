"""Production: Postgres, Redis, secrets from the environment; passes `check --deploy` and refuses
to start on settings that would be unsafe (a weak or known key, any host, SQLite, no Redis)."""

from django.core.exceptions import ImproperlyConfigured

from webapp.settings.base import *  # noqa: F401,F403
from webapp.settings.base import CELERY_BROKER_URL, DATABASES, EMBEDDED_SECRET_KEY
from webapp.settings.env import env, redis_setting, require, strong_secret_key

DEBUG = False

SECRET_KEY = strong_secret_key(require("SECRET_KEY"), published=EMBEDDED_SECRET_KEY)
ALLOWED_HOSTS = [h.strip() for h in require("ALLOWED_HOSTS").split(",") if h.strip()]
if "*" in ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS may not be '*' in production: name the site's hosts")
require("DATABASE_URL")
if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
    raise ImproperlyConfigured(
        "DATABASE_URL must point at PostgreSQL in production (SQLite is the embedded mode)"
    )
# The broker and the cache; without it the file-system broker and per-process memory would be used.
redis_setting("REDIS_URL", require("REDIS_URL"))
redis_setting("CELERY_BROKER_URL", CELERY_BROKER_URL)  # defaults to REDIS_URL; may name another

# Behind a TLS-terminating proxy that sets X-Forwarded-Proto, set BEHIND_TLS_PROXY=true; trusting
# the header when clients reach the app directly would let any of them claim https.
if env.bool("BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
