"""Production: Postgres, Redis, secrets from the environment; passes `check --deploy`."""

from webapp.settings.base import *  # noqa: F401,F403
from webapp.settings.env import env, require

DEBUG = False
SECRET_KEY = require("SECRET_KEY")
ALLOWED_HOSTS = [h for h in require("ALLOWED_HOSTS").split(",") if h.strip()]
if not env.str("DATABASE_URL", default=""):
    require("DATABASE_URL")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
