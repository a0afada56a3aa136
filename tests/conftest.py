"""Shared fixtures. The suite runs on Postgres + Redis when DATABASE_URL/REDIS_URL are set (CI),
otherwise on the embedded default (SQLite + the file-system broker), and says which."""

from __future__ import annotations

import os

import pytest


def pytest_report_header(config):
    from django.conf import settings

    db = settings.DATABASES["default"]
    engine = db["ENGINE"].rsplit(".", 1)[-1]
    where = (
        f"{db.get('HOST') or 'local'}:{db.get('PORT') or ''}/{db['NAME']}"
        if engine != "sqlite3"
        else db["NAME"]
    )
    broker = settings.CELERY_BROKER_URL
    lines = [f"20Q Lab tests: database {engine} ({where}); broker {broker}"]
    if engine == "sqlite3" or broker.startswith("filesystem"):
        lines.append(
            "20Q Lab tests: DATABASE_URL/REDIS_URL not set -> falling back to the embedded default "
            "(SQLite, file-system broker); CI runs them on Postgres and Redis"
        )
    return lines


def pytest_sessionfinish(session, exitstatus):
    """Remove this run's private DATA_DIR (see webapp/settings/test.py)."""
    import shutil
    from pathlib import Path

    run = os.environ.get("TWENTYQ_TEST_RUN")
    data_dir = Path(os.environ.get("DATA_DIR", ""))
    if not run or os.getpid() != int(run) or not data_dir.name.startswith(f"test-run-{run}"):
        return
    # the process that named the run removes it, with its xdist workers' folders (-gw0, ...)
    for folder in data_dir.parent.glob(f"test-run-{run}*"):
        if folder.name == f"test-run-{run}" or folder.name.startswith(f"test-run-{run}-gw"):
            shutil.rmtree(folder, ignore_errors=True)


# The shipped word lists are in every test database from the start: seeding them (about 11,000
# rows) took 2 to 5 s in each of the 200-odd tests that need them. seed_word_lists() stays
# idempotent, so those tests still call it. A transactional test empties the database when it
# ends; the lists come back before the next test that runs inside a transaction.
_catalog = {"emptied": False}


def _db_use(item) -> str:
    """ "transactional", "db" or "" for a test item (pytest-django's own classification)."""
    from pytest_django.fixtures import validate_django_db

    fixtures = getattr(item, "fixturenames", [])
    marker = item.get_closest_marker("django_db")
    transaction = marker is not None and any(validate_django_db(marker)[:2])
    if transaction or "transactional_db" in fixtures or "live_server" in fixtures:
        return "transactional"
    return "db" if marker is not None or "db" in fixtures else ""


def _seed_committed(config) -> None:
    from pytest_django.plugin import blocking_manager_key

    from webapp.catalog.services import seed_word_lists

    with config.stash[blocking_manager_key].unblock():
        seed_word_lists()
    _catalog["emptied"] = False


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, request):
    _seed_committed(request.config)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    if _catalog["emptied"] and _db_use(item) == "db":
        _seed_committed(item.config)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    yield
    if _db_use(item) == "transactional":
        _catalog["emptied"] = True


@pytest.fixture
def no_queue():
    """Celery messages the web app sends, held (recorded, not published) for the whole test: the
    mock of webapp.core.sending.send_task (see tests/sending.py)."""
    from tests.sending import tasks_held

    with tasks_held() as send:
        yield send


@pytest.fixture
def no_word_lists(db):
    """A catalog without the shipped word lists, for the tests of seeding them."""
    from webapp.catalog.models import WordList

    WordList.objects.all().delete()


@pytest.fixture
def make_user(db):
    from webapp.accounts.services import user_create

    counter = {"n": 0}

    def make(*roles: str, username: str | None = None):
        counter["n"] += 1
        return user_create(
            username=username or f"user{counter['n']}_{'_'.join(roles) or 'none'}",
            password="a-long-test-password",
            roles=tuple(roles),
        )

    return make


@pytest.fixture
def player(make_user):
    return make_user("player")


@pytest.fixture
def researcher(make_user):
    return make_user("researcher")


@pytest.fixture
def annotator(make_user):
    return make_user("annotator")


@pytest.fixture
def rclient(client, researcher):
    """The test client signed in as a researcher (the jobs pages and API)."""
    client.force_login(researcher)
    return client


@pytest.fixture
def client_for(client):
    def login(user):
        client.force_login(user)
        return client

    return login


@pytest.fixture(scope="session")
def redis_url() -> str | None:
    """The Redis to test against: REDIS_URL, else a local server if one answers."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    url = os.environ.get("REDIS_URL") or f"redis://127.0.0.1:6379/{(15 - worker) % 16}"
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except Exception:
        return None
    return url
