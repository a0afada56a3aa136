import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_django(*args, env_extra=None, unset=()):
    # DJANGO_ALLOW_ASYNC_UNSAFE (set by browser tests) makes check --deploy warn: keep it out
    env = {k: v for k, v in os.environ.items() if k not in (*unset, "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_production_settings_pass_check_deploy(tmp_path):
    result = run_django("check", "--deploy", "--fail-level", "WARNING", env_extra={
        "DJANGO_SETTINGS_MODULE": "webapp.settings.production",
        "SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-0123456789",
        "ALLOWED_HOSTS": "20q.example.org",
        "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/db",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "DATA_DIR": str(tmp_path),
    })
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_production_without_secret_key_names_the_variable(tmp_path):
    result = run_django("check", env_extra={
        "DJANGO_SETTINGS_MODULE": "webapp.settings.production", "ALLOWED_HOSTS": "x.org",
        "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/db", "DATA_DIR": str(tmp_path)}, unset=("SECRET_KEY",))
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


@pytest.mark.parametrize("var,value", [("DATABASE_URL", "not-a-url"), ("CELERY_BROKER_URL", "ftp://nope"),
                                       ("JOB_STALE_SECONDS", "soon")])
def test_malformed_value_stops_startup_naming_it(tmp_path, var, value):
    result = run_django("check", env_extra={"DJANGO_SETTINGS_MODULE": "webapp.settings.local", var: value,
                                            "DATA_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert var in result.stderr


def test_embedded_default_is_sqlite_wal_and_filesystem_broker(tmp_path):
    code = ("import django; django.setup(); from django.conf import settings as s; from django.db import connection;"
            "c=connection.cursor(); c.execute('PRAGMA journal_mode'); "
            "print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, c.fetchone()[0])")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")}
    env.update({"DJANGO_SETTINGS_MODULE": "webapp.settings.local", "DATA_DIR": str(tmp_path)})
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
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


@pytest.mark.parametrize("var,value,words", [
    ("SECRET_KEY", "embedded-insecure-key-change-me-in-production-0123456789", "published"),
    ("SECRET_KEY", "abc", "too weak"),
    ("SECRET_KEY", "a" * 60, "too weak"),
    ("ALLOWED_HOSTS", "*", "ALLOWED_HOSTS"),
    ("ALLOWED_HOSTS", "20q.example.org,*", "ALLOWED_HOSTS"),
    ("DATABASE_URL", "sqlite:////tmp/db.sqlite3", "PostgreSQL"),
    ("REDIS_URL", "", "REDIS_URL"),
])
def test_production_refuses_unsafe_settings_at_start(tmp_path, var, value, words):
    result = run_django("check", env_extra={**PRODUCTION, var: value, "DATA_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert words in result.stderr


def test_production_trusts_the_proxy_header_only_when_told(tmp_path):
    code = ("import django; django.setup(); from django.conf import settings as s; "
            "print(getattr(s, 'SECURE_PROXY_SSL_HEADER', None))")
    outputs = []
    for extra in ({}, {"BEHIND_TLS_PROXY": "true"}):
        env = {**{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}, **PRODUCTION,
               **extra, "DATA_DIR": str(tmp_path)}
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        outputs.append(out.stdout.strip())
    assert outputs == ["None", "('HTTP_X_FORWARDED_PROTO', 'https')"]


@pytest.mark.django_db
def test_healthz_answers_before_host_checks_and_https_redirects(client, settings):
    settings.ALLOWED_HOSTS = ["20q.example.org"]
    settings.SECURE_SSL_REDIRECT = True
    response = client.get("/healthz", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 200 and response.content == b"ok\n"
    assert client.get("/", HTTP_HOST="127.0.0.1:8000").status_code == 400  # other paths: host checked
