"""Settings shared by every environment. Infrastructure only: no hyperparameters here.

Every infrastructural value comes from the environment; the defaults are the embedded
mode (SQLite in WAL mode inside DATA_DIR and kombu's filesystem broker: no servers).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF

from webapp.settings.env import database_setting, env, int_setting, rate_setting, url_setting

BASE_DIR = Path(__file__).resolve().parents[2]
DATA_DIR = Path(env.str("DATA_DIR", default=str(BASE_DIR / "var"))).resolve()
MODELS_DIR = DATA_DIR / "models"
CHECKPOINTS_DIR = DATA_DIR / "checkpoints"
EXPORTS_DIR = DATA_DIR / "exports"
for _d in (DATA_DIR, MODELS_DIR, CHECKPOINTS_DIR, EXPORTS_DIR, DATA_DIR / "staticfiles"):
    _d.mkdir(parents=True, exist_ok=True)

EMBEDDED_SECRET_KEY = (
    "embedded-insecure-key-change-me-in-production-0123456789"  # public: never in production
)
SECRET_KEY = env.str("SECRET_KEY", default=EMBEDDED_SECRET_KEY)
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "axes",  # login lockout
    "csp",  # Content-Security-Policy header
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "webapp.core",
    "webapp.accounts",
    "webapp.catalog",
    "webapp.play",
    "webapp.jobs",
    "webapp.labelling",
    "webapp.leaderboards",
    "webapp.arena",
]

MIDDLEWARE = [
    "webapp.core.health.HealthCheckMiddleware",  # /healthz, before host checks and https redirects
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "webapp.core.hygiene.InputHygieneMiddleware",  # NUL, surrogates, deep JSON, huge ids: 400/404
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into the lockout page
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"
ASGI_APPLICATION = "webapp.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "webapp.accounts.context_processors.roles",
                "webapp.core.context_processors.site",
            ],
        },
    }
]

DATABASES = {"default": database_setting("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# --- Login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for one username from
# one address, that pair is refused, right password included, until the cool-off has passed.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]  # a stranger cannot lock a user out
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "webapp.accounts.services.client_ip"  # the guest limit's address
AXES_USERNAME_CALLABLE = "webapp.accounts.services.login_attempt_username"
AXES_LOCKOUT_TEMPLATE = "accounts/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429
# ... and any address may try at most LOGIN_RATE logins (any usernames): bounds the hashing it
# causes (empty: no cap)
LOGIN_RATE = rate_setting("LOGIN_RATE", "30/minute", allow_off=True)
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "core:home"
LOGOUT_REDIRECT_URL = "core:home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "webapp" / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
MEDIA_ROOT = EXPORTS_DIR
MEDIA_URL = "media/"

# --- Content-Security-Policy (django-csp): pages load only this site's scripts, styles and images;
# no inline script or style (charts read JSON from json_script blocks), no eval, no framing.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# --- REST API --------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Basic auth (a password on every request) only where the settings module adds it: never in
    # production. Scripts log in once at /api/auth/token/ (lockout as the login form) instead.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "EXCEPTION_HANDLER": "webapp.core.exceptions.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_RATES": {"guest_play": rate_setting("GUEST_PLAY_RATE", "120/minute")},
    # Proxies in front of the app that append to X-Forwarded-For (0: the header is ignored and
    # REMOTE_ADDR is the client, so a client cannot pick its own address for the guest limit).
    "NUM_PROXIES": env.int("TRUSTED_PROXIES", default=0),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "20Q Lab API",
    "DESCRIPTION": "Play and judge 20 Questions, inspect trajectories, launch jobs.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",  # served from our own static files, no CDN
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # two `role` choice sets (the role to play, a game's role for the viewer): one name each
    "ENUM_NAME_OVERRIDES": {
        "PlayRoleEnum": ["guesser", "answerer"],
        "GameRoleEnum": ["guesser", "answerer", "none"],
        # two `verdict` choice sets: a person's answer in a game (arena) and a label's verdict
        "HumanVerdictEnum": ["yes", "no", "unknown", "invalid", "finished"],
        "LabelVerdictEnum": ["yes", "no", "unclear", "invalid"],
    },
}

# --- Cache (throttling, rate limits): Redis when configured, else per-process memory ---------
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": env.str("REDIS_URL"),
            # fail fast when Redis is down: guests then get a 503, not a hung request
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
        if env.str("REDIS_URL", default="")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "twentyq"}
    )
}

# --- Celery ------------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
BROKER_DIR = DATA_DIR / "broker"
CELERY_BROKER_URL = url_setting(
    "CELERY_BROKER_URL",
    REDIS_URL or "filesystem://",
    {"redis", "rediss", "filesystem", "memory", "amqp"},
)
if CELERY_BROKER_URL.startswith("filesystem://"):
    for _d in ("queue", "processed", "control"):
        (BROKER_DIR / _d).mkdir(parents=True, exist_ok=True)
    # kombu's transport with atomic writes and a reader that sets unreadable messages aside
    CELERY_BROKER_TRANSPORT = "workers.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": int_setting("CELERY_VISIBILITY_TIMEOUT", 6 * 3600)
    }
CELERY_RESULT_BACKEND = None  # jobs store their own results in the database
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = int_setting("CELERY_TASK_SOFT_TIME_LIMIT", 12 * 3600)
CELERY_TASK_TIME_LIMIT = int_setting("CELERY_TASK_TIME_LIMIT", 12 * 3600 + 600)
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The queue that runs model-heavy jobs; the embedded default has only the CPU.
JOBS_GPU_QUEUE = env.str("JOBS_GPU_QUEUE", default="cpu")
# The most processes one training job may ask for (`processes`: the GPUs of one GPU node, or CPU
# processes on a CPU worker); checked before a job is queued.
JOBS_MAX_PROCESSES = int_setting("JOBS_MAX_PROCESSES", 8)
JOB_HEARTBEAT_SECONDS = int_setting("JOB_HEARTBEAT_SECONDS", 10)
JOB_STALE_SECONDS = int_setting("JOB_STALE_SECONDS", 60)
JOB_REAP_SECONDS = int_setting(
    "JOB_REAP_SECONDS", 5
)  # how often the reaper and the republish sweep run
# A queued job whose message the broker no longer holds after this long is published again.
JOB_REPUBLISH_SECONDS = int_setting("JOB_REPUBLISH_SECONDS", 60)
# Postgres ends a worker's fenced write transaction left idle this long (a paused worker's row
# lock).
JOB_FENCE_IDLE_SECONDS = int_setting("JOB_FENCE_IDLE_SECONDS", 5)
# GRPO's generation server (rollout_backend=server): the `rollout_server` a job gets when it asks
# for server rollouts without naming one (docker-compose.yml's `generation` service); "" = none.
GENERATION_SERVER_URL = env.str("GENERATION_SERVER_URL", default="").strip()
# The docs site: `make docs-build` (and `make run`) build it into DOCS_SITE_DIR, which the web app
# serves at /docs/ (webapp.core.docs_site). The header's "Docs" link goes to DOCS_URL where the docs
# are served elsewhere, else to /docs/ once the site is built; no link otherwise.
DOCS_URL = env.str("DOCS_URL", default="").strip()
DOCS_SITE_DIR = Path(env.str("DOCS_SITE_DIR", default=str(BASE_DIR / "var" / "site"))).resolve()
# Housekeeping (reaper, republish sweep) has its own queue and worker process, so it never waits
# behind busy job slots; leaderboard refreshes (seconds of arithmetic each) have another, so they
# never delay the reaper's re-queue of a dead job.
HOUSEKEEPING_QUEUE = "housekeeping"
LEADERBOARDS_QUEUE = "leaderboards"
CELERY_TASK_ROUTES = {
    "jobs.reap_stale": {"queue": HOUSEKEEPING_QUEUE},
    "jobs.republish_lost": {"queue": HOUSEKEEPING_QUEUE},
    "leaderboards.refresh": {"queue": LEADERBOARDS_QUEUE},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}

# Beat messages expire after one period: a housekeeping worker that was down finds one, not a pile.
CELERY_BEAT_SCHEDULE = {
    "reap-stale-jobs": {
        "task": "jobs.reap_stale",
        "schedule": float(JOB_REAP_SECONDS),
        "options": {"queue": HOUSEKEEPING_QUEUE, "expires": float(JOB_REAP_SECONDS)},
    },
    "republish-lost-jobs": {
        "task": "jobs.republish_lost",
        "schedule": float(JOB_REAP_SECONDS),
        "options": {"queue": HOUSEKEEPING_QUEUE, "expires": float(JOB_REAP_SECONDS)},
    },
    "refresh-leaderboards": {
        "task": "leaderboards.refresh",
        "schedule": 300.0,
        "options": {"queue": LEADERBOARDS_QUEUE, "expires": 300.0},
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
