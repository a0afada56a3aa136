"""`make run` (manage.py devrun): one ready line once web and workers answer, a process that exits
is restarted (bounded, with a log line) instead of stopping the site, and the housekeeping sweeps
log at INFO only when they did something (issue 34 items 10 and 22)."""

from __future__ import annotations

import logging
import sys
import time

import pytest

from webapp.core.management.commands import devrun
from workers.celery import QuietSweeps, _tell_devrun

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]
EXIT_3 = [sys.executable, "-c", "import sys; sys.exit(3)"]
READY_THEN_SLEEP = [
    sys.executable,
    "-c",
    "import os, pathlib, time; pathlib.Path(os.environ['DEVRUN_READY_FILE']).touch(); "
    "time.sleep(60)",
]


@pytest.fixture
def supervise(tmp_path):
    made = []

    def make(cmds, **kwargs):
        lines: list[str] = []
        sup = devrun.Supervisor(cmds, {}, ready_dir=tmp_path, say=lines.append, **kwargs)
        sup.lines = lines
        made.append(sup)
        sup.start_all()
        return sup

    yield make
    for sup in made:
        sup.stop(grace=5)


def wait_dead(sup, name):
    deadline = time.monotonic() + 10
    while sup.procs[name].poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_dead_worker_is_restarted_with_a_log_line_and_the_site_keeps_running(supervise):
    sup = supervise({"web": SLEEP, "housekeeping": EXIT_3}, max_restarts=2, window=60)
    for _ in range(4):
        wait_dead(sup, "housekeeping")
        assert sup.check() is True  # never a reason to stop the site
    assert sup.lines[:2] == [
        "devrun: the housekeeping worker exited (code 3); restarting it",
        "devrun: the housekeeping worker exited (code 3); restarting it",
    ]
    assert "not restarting it" in sup.lines[2] and len(sup.lines) == 3  # bounded, said once
    assert sup.procs["web"].poll() is None


def test_a_web_server_that_keeps_dying_stops_everything(supervise):
    sup = supervise({"web": EXIT_3, "jobs": SLEEP}, max_restarts=1, window=60)
    wait_dead(sup, "web")
    assert sup.check() is True
    wait_dead(sup, "web")
    assert sup.check() is False and "everything stops" in sup.lines[-1]


def test_ready_only_once_the_web_server_and_every_worker_answer(supervise, tmp_path):
    web_up = {"value": False}
    sup = supervise(
        {"web": SLEEP, "jobs": READY_THEN_SLEEP, "housekeeping": SLEEP},
        web_ready=lambda: web_up["value"],
    )
    deadline = time.monotonic() + 20
    while not (tmp_path / "jobs.ready").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sup.ready()
    assert sup.waiting_for() == ["the web server", "the housekeeping worker"]
    (tmp_path / "housekeeping.ready").touch()
    assert not sup.ready()
    web_up["value"] = True
    assert sup.ready()


def test_the_ready_line_names_the_address_what_runs_and_how_to_stop():
    line = devrun.ready_line("0.0.0.0:9000", debug=False, web_workers=2)
    assert "http://0.0.0.0:9000/" in line and "Ctrl-C" in line
    for part in ("job worker", "housekeeping worker", "leaderboards worker", "DEBUG off"):
        assert part in line


def test_health_url_reaches_a_wildcard_bind_on_loopback():
    assert devrun.health_url("127.0.0.1:8000") == "http://127.0.0.1:8000/healthz"
    assert devrun.health_url("0.0.0.0:8080") == "http://127.0.0.1:8080/healthz"
    assert devrun.health_url("[::]:8080") == "http://[::1]:8080/healthz"
    assert devrun.health_url("unix:/tmp/s.sock") is None


def test_a_worker_tells_devrun_it_is_ready(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVRUN_READY_FILE", str(tmp_path / "jobs.ready"))
    _tell_devrun(sender=None)
    assert (tmp_path / "jobs.ready").exists()


def record(name, msg, args=(), data=None, level=logging.INFO):
    rec = logging.LogRecord(name, level, __file__, 1, msg, args, None)
    if data is not None:
        rec.data = data
    return rec


@pytest.mark.parametrize(
    "rec,shown",
    [
        (record("celery.beat", "Sending due task %s (%s)", ("reap", "jobs.reap_stale")), False),
        (record("celery.worker.strategy", "received", data={"name": "jobs.republish_lost"}), False),
        (
            record(
                "celery.app.trace",
                "succeeded",
                data={"name": "jobs.reap_stale", "return_value": "{'requeued': [], 'failed': []}"},
            ),
            False,
        ),
        (
            record(
                "celery.app.trace",
                "succeeded",
                data={
                    "name": "jobs.reap_stale",
                    "return_value": "{'requeued': [12]}",
                },
            ),
            True,  # it acted: INFO
        ),
        (
            record(
                "celery.worker.request",
                "Discarding revoked task: %s[%s]",
                ("jobs.reap_stale", "0d1f"),
            ),
            False,  # an expired beat message left from the last run
        ),
        (record("celery.app.trace", "ok", data={"name": "jobs.run", "return_value": "x"}), True),
        (record("celery.beat", "Sending due task %s (%s)", ("lb", "leaderboards.refresh")), True),
        (
            record("celery.app.trace", "failed", data={"name": "jobs.reap_stale"}, level=40),
            True,  # errors always
        ),
    ],
)
def test_housekeeping_sweeps_log_at_info_only_when_they_acted(rec, shown):
    logging.getLogger(rec.name).setLevel(logging.INFO)
    try:
        assert QuietSweeps().filter(rec) is shown
    finally:
        logging.getLogger(rec.name).setLevel(logging.NOTSET)


def test_quiet_sweep_lines_are_kept_at_debug_when_debug_logging_is_on():
    rec = record("celery.worker.strategy", "received", data={"name": "jobs.reap_stale"})
    logging.getLogger(rec.name).setLevel(logging.DEBUG)
    try:
        assert QuietSweeps().filter(rec) is True and rec.levelname == "DEBUG"
    finally:
        logging.getLogger(rec.name).setLevel(logging.NOTSET)


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie not yet reaped
    except FileNotFoundError:
        return True


def test_what_a_dead_process_left_behind_goes_with_it(supervise, tmp_path):
    # the housekeeping worker forks the beat: a killed worker must not leave a second beat running
    leaves_a_child = [
        sys.executable,
        "-c",
        "import os, subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "open(os.environ['DEVRUN_READY_FILE'] + '.child', 'w').write(str(p.pid)); sys.exit(3)",
    ]
    sup = supervise({"housekeeping": leaves_a_child}, max_restarts=1, window=60)
    wait_dead(sup, "housekeeping")
    child = int((tmp_path / "housekeeping.ready.child").read_text())
    assert not gone(child)
    sup.check()
    deadline = time.monotonic() + 10
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(child)


def test_stopping_takes_every_process_group_down(supervise, tmp_path):
    forks_and_waits = [
        sys.executable,
        "-c",
        "import os, subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "open(os.environ['DEVRUN_READY_FILE'] + '.child', 'w').write(str(p.pid)); time.sleep(60)",
    ]
    sup = supervise({"web": SLEEP, "housekeeping": forks_and_waits})
    deadline = time.monotonic() + 10
    while not (tmp_path / "housekeeping.ready.child").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int((tmp_path / "housekeeping.ready.child").read_text())
    sup.stop(grace=5)
    deadline = time.monotonic() + 10
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(child) and all(p.poll() is not None for p in sup.procs.values())
