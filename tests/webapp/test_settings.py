import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from webapp.settings.env import rate_setting, redis_setting, strong_secret_key

ROOT = Path(__file__).resolve().parents[2]


def run_django(*args, env_extra=None, unset=()):
    # DJANGO_ALLOW_ASYNC_UNSAFE (set by browser tests) makes check --deploy warn: keep it out
    env = {k: v for k, v in os.environ.items() if k not in (*unset, "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_check_deploy(tmp_path):
    result = run_django(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        env_extra={
            "DJANGO_SETTINGS_MODULE": "webapp.settings.production",
            "SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-0123456789",
            "ALLOWED_HOSTS": "20q.example.org",
            "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/db",
            "REDIS_URL": "redis://127.0.0.1:6379/0",
            "DATA_DIR": str(tmp_path),
        },
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_production_without_secret_key_names_the_variable(tmp_path):
    result = run_django(
        "check",
        env_extra={
            "DJANGO_SETTINGS_MODULE": "webapp.settings.production",
            "ALLOWED_HOSTS": "x.org",
            "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/db",
            "DATA_DIR": str(tmp_path),
        },
        unset=("SECRET_KEY",),
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


@pytest.mark.parametrize(
    "var,value",
    [
        ("DATABASE_URL", "not-a-url"),
        ("CELERY_BROKER_URL", "ftp://nope"),
        ("JOB_STALE_SECONDS", "soon"),
    ],
)
def test_malformed_value_stops_startup_naming_it(tmp_path, var, value):
    result = run_django(
        "check",
        env_extra={
            "DJANGO_SETTINGS_MODULE": "webapp.settings.local",
            var: value,
            "DATA_DIR": str(tmp_path),
        },
    )
    assert result.returncode != 0
    assert var in result.stderr


def test_embedded_default_is_sqlite_wal_and_filesystem_broker(tmp_path):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "from django.db import connection;"
        "c=connection.cursor(); c.execute('PRAGMA journal_mode'); "
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, c.fetchone()[0])"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")
    }
    env.update({"DJANGO_SETTINGS_MODULE": "webapp.settings.local", "DATA_DIR": str(tmp_path)})
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["django.db.backends.sqlite3", "filesystem://", "wal"]
    assert (tmp_path / "db.sqlite3").exists()


PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "webapp.settings.production",
    "SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-0123456789",
    "ALLOWED_HOSTS": "20q.example.org",
    "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/db",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}


@pytest.mark.parametrize(
    "var,value,words",
    [
        ("SECRET_KEY", "embedded-insecure-key-change-me-in-production-0123456789", "published"),
        ("SECRET_KEY", "abc", "too weak"),
        ("SECRET_KEY", "a" * 60, "too weak"),
        ("ALLOWED_HOSTS", "*", "ALLOWED_HOSTS"),
        ("ALLOWED_HOSTS", "20q.example.org,*", "ALLOWED_HOSTS"),
        ("DATABASE_URL", "sqlite:////tmp/db.sqlite3", "PostgreSQL"),
        ("REDIS_URL", "", "REDIS_URL"),
        ("REDIS_URL", "memory://", "redis://"),  # jobs would never reach a worker
        ("CELERY_BROKER_URL", "memory://", "CELERY_BROKER_URL"),  # beside a valid REDIS_URL
        ("SECRET_KEY", "abcde" * 10, "too weak"),  # passes Django's W009
        ("SECRET_KEY", "embedded-insecure-key-change-me-in-production-0123456789!", "published"),
        ("GUEST_PLAY_RATE", "garbage", "GUEST_PLAY_RATE"),
        ("LOGIN_RATE", "garbage", "LOGIN_RATE"),
    ],
)
def test_production_refuses_unsafe_settings_at_start(tmp_path, var, value, words):
    result = run_django("check", env_extra={**PRODUCTION, var: value, "DATA_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert words in result.stderr


EMBEDDED = "embedded-insecure-key-change-me-in-production-0123456789"


@pytest.mark.parametrize(
    "key",
    [
        "abcde" * 10,  # 5 distinct characters: Django's W009 lets it through
        "abcdefghij" * 6,
        "password" * 7,
        "abcdefghijklmnopqrstuvwxyz" * 2,  # a short period
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",  # runs
        "0" * 40 + "a1b2c3d4e5f6g7h8i9j0",  # a long run
        "short-but-random-Xq9#",
    ],
)
def test_low_entropy_secret_keys_are_refused(key):
    with pytest.raises(ImproperlyConfigured, match="too weak"):
        strong_secret_key(key, published=EMBEDDED)


@pytest.mark.parametrize(
    "key",
    [
        EMBEDDED + "x",
        "X" + EMBEDDED[1:],
        EMBEDDED.upper(),
        EMBEDDED.replace("-", "_"),
        EMBEDDED[::-1],
        "my-" + EMBEDDED[10:40] + "-and-more-characters-to-pass",
        "django-insecure-" + "q8#w!z" * 8,
    ],
)
def test_the_published_key_with_small_edits_is_refused(key):
    with pytest.raises(ImproperlyConfigured, match="published"):
        strong_secret_key(key, published=EMBEDDED)


def test_generated_keys_of_every_usual_kind_are_accepted():
    from django.core.management.utils import get_random_secret_key

    for _ in range(300):
        for key in (secrets.token_urlsafe(50), secrets.token_hex(25), get_random_secret_key()):
            assert strong_secret_key(key, published=EMBEDDED) == key


@pytest.mark.parametrize(
    "url", ["memory://", "filesystem://", "amqp://h", "redis-ish", "http://redis:6379"]
)
def test_production_needs_a_redis_url(url):
    with pytest.raises(ImproperlyConfigured, match="redis://"):
        redis_setting("REDIS_URL", url)
    assert redis_setting("REDIS_URL", "rediss://h:6380/1") == "rediss://h:6380/1"


@pytest.mark.parametrize("value", ["garbage", "30", "0/minute", "-1/minute", "30/fortnight", "/m"])
def test_malformed_rates_are_refused(monkeypatch, value):
    monkeypatch.setenv("GUEST_PLAY_RATE", value)
    with pytest.raises(ImproperlyConfigured, match="GUEST_PLAY_RATE"):
        rate_setting("GUEST_PLAY_RATE", "120/minute")


def test_rates_are_normalised_and_login_rate_may_be_off(monkeypatch):
    monkeypatch.setenv("LOGIN_RATE", " 30 / Minutes ")
    assert rate_setting("LOGIN_RATE", "30/minute", allow_off=True) == "30/minutes"
    monkeypatch.setenv("LOGIN_RATE", "")
    assert rate_setting("LOGIN_RATE", "30/minute", allow_off=True) is None
    monkeypatch.setenv("GUEST_PLAY_RATE", "")
    with pytest.raises(ImproperlyConfigured):
        rate_setting("GUEST_PLAY_RATE", "120/minute")
    monkeypatch.delenv("GUEST_PLAY_RATE")
    assert rate_setting("GUEST_PLAY_RATE", "120/minute") == "120/minute"


def test_production_trusts_the_proxy_header_only_when_told(tmp_path):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(getattr(s, 'SECURE_PROXY_SSL_HEADER', None))"
    )
    outputs = []
    for extra in ({}, {"BEHIND_TLS_PROXY": "true"}):
        env = {
            **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
            **PRODUCTION,
            **extra,
            "DATA_DIR": str(tmp_path),
        }
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        outputs.append(out.stdout.strip())
    assert outputs == ["None", "('HTTP_X_FORWARDED_PROTO', 'https')"]


@pytest.mark.django_db
def test_healthz_answers_before_host_checks_and_https_redirects(client, settings):
    settings.ALLOWED_HOSTS = ["20q.example.org"]
    settings.SECURE_SSL_REDIRECT = True
    response = client.get("/healthz", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 200 and response.content == b"ok\n"
    assert (
        client.get("/", HTTP_HOST="127.0.0.1:8000").status_code == 400
    )  # other paths: host checked


def _compose() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def test_compose_flower_needs_a_login_and_listens_on_loopback_only():
    flower = _compose()["flower"]
    script = flower["command"][-1].replace("$$", "$")  # compose turns $$ into $
    assert '--basic-auth="$FLOWER_BASIC_AUTH"' in script
    assert all(port.startswith("127.0.0.1:") for port in flower["ports"])
    env = {k: v for k, v in os.environ.items() if k != "FLOWER_BASIC_AUTH"}
    refused = subprocess.run(
        ["sh", "-c", script.replace("exec celery", "exec echo celery")],
        env=env,
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert refused.returncode != 0 and "FLOWER_BASIC_AUTH" in refused.stderr
    started = subprocess.run(
        ["sh", "-c", script.replace("exec celery", "exec echo celery")],
        env={**env, "FLOWER_BASIC_AUTH": "ops:a-long-password"},
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert started.returncode == 0 and "--basic-auth=ops:a-long-password" in started.stdout


def test_compose_trusts_forwarded_headers_only_behind_its_tls_proxy():
    services = _compose()
    web = services["web"]
    assert (
        web["environment"]["BEHIND_TLS_PROXY"] == "true"
        and web["environment"]["TRUSTED_PROXIES"] == "1"
    )
    assert all(
        port.startswith("127.0.0.1:") for port in web["ports"]
    )  # clients reach it via the proxy
    proxy = services["proxy"]
    assert "reverse-proxy" in proxy["command"] and "web:8000" in proxy["command"]
    assert "/healthz" in " ".join(web["healthcheck"]["test"])


def test_production_uses_session_and_token_auth_a_csp_and_the_login_lockout(tmp_path):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.REST_FRAMEWORK['DEFAULT_AUTHENTICATION_CLASSES']); "
        "print(s.CONTENT_SECURITY_POLICY['DIRECTIVES']['script-src']); "
        "print(s.AUTHENTICATION_BACKENDS[0], s.REST_FRAMEWORK['NUM_PROXIES'])"
    )
    env = {
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        **PRODUCTION,
        "DATA_DIR": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    auth, script_src, axes = out.stdout.strip().splitlines()
    assert "BasicAuthentication" not in auth and "TokenAuthentication" in auth and "Session" in auth
    assert script_src == "[\"'self'\"]"
    assert axes == "axes.backends.AxesStandaloneBackend 0"


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy_without_unsafe_inline(client):
    policy = client.get("/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy
