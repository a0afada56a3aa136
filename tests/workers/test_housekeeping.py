"""Housekeeping (reaper, republish sweep) has its own queue, consumed by its own worker process in
every layout, and leaderboard refreshes another (so refreshes never delay reaping); `make run`
serves with gunicorn and DEBUG off unless asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from webapp.core.management.commands import devrun
from webapp.jobs import selectors
from workers.celery import app

ROOT = Path(__file__).resolve().parents[2]
HOUSEKEEPING = ("jobs.reap_stale", "jobs.republish_lost")
QUEUE_OF = {**dict.fromkeys(HOUSEKEEPING, "housekeeping"), "leaderboards.refresh": "leaderboards"}


@pytest.mark.parametrize("task,queue", QUEUE_OF.items())
def test_housekeeping_tasks_route_to_their_own_queue(task, queue):
    assert app.amqp.router.route({}, task, args=(), kwargs={})["queue"].name == queue


def test_job_runs_do_not_route_to_housekeeping():
    assert app.amqp.router.route({}, "jobs.run", args=(), kwargs={})["queue"].name == "cpu"


def test_the_web_app_sends_the_tasks_the_workers_register_by_their_names():
    from webapp.core import sending
    from workers import tasks

    assert tasks.job_run_task.name == sending.JOB_RUN
    assert tasks.leaderboards_refresh_task.name == sending.LEADERBOARDS_REFRESH
    assert {sending.JOB_RUN, sending.LEADERBOARDS_REFRESH} <= set(app.tasks)


def test_every_beat_entry_goes_to_its_queue_and_expires_within_its_period():
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert set(QUEUE_OF) <= tasks
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["options"]["queue"] == QUEUE_OF[entry["task"]]
        assert 0 < entry["options"]["expires"] <= entry["schedule"]
    reap = settings.CELERY_BEAT_SCHEDULE["reap-stale-jobs"]["schedule"]
    assert reap <= 10  # a dead job is re-queued within JOB_STALE_SECONDS + 10 s


def test_the_dashboard_counts_only_job_queues():
    lengths = selectors.queue_lengths()
    assert "housekeeping" not in lengths and "leaderboards" not in lengths


def test_embedded_layout_runs_gunicorn_a_job_worker_and_a_housekeeping_worker_with_the_beat():
    cmds = devrun.commands("127.0.0.1:8000", python="py")
    assert cmds["web"][:3] == ["py", "-m", "gunicorn"] and "runserver" not in " ".join(cmds["web"])
    assert cmds["web"][cmds["web"].index("--bind") + 1] == "127.0.0.1:8000"
    jobs, housekeeping, boards = cmds["jobs"], cmds["housekeeping"], cmds["leaderboards"]
    assert jobs[jobs.index("-Q") + 1] == "cpu,gpu" and "-B" not in jobs
    assert housekeeping[housekeeping.index("-Q") + 1] == "housekeeping" and "-B" in housekeeping
    assert boards[boards.index("-Q") + 1] == "leaderboards" and "-B" not in boards


def test_devrun_keeps_debug_off_unless_asked(monkeypatch):
    monkeypatch.delenv("DEBUG", raising=False)
    parser = devrun.Command().create_parser("manage.py", "devrun")
    assert parser.parse_args([]).debug is False
    assert parser.parse_args(["--debug"]).debug is True
    assert (
        devrun.environment(False)["DEBUG"] == "false"
        and devrun.environment(True)["DEBUG"] == "true"
    )
    monkeypatch.setenv("DEBUG", "true")
    assert devrun.Command().create_parser("manage.py", "devrun").parse_args([]).debug is True


def test_the_embedded_settings_have_debug_off_by_default(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "DATABASE_URL")}
    env.update(DJANGO_SETTINGS_MODULE="webapp.settings.local", DATA_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.DEBUG)"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "False", out.stderr


def test_compose_has_a_housekeeping_worker_and_job_workers_do_not_consume_it():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    queues = {
        name: s["command"][s["command"].index("-Q") + 1]
        for name, s in services.items()
        if "worker" in s.get("command", [])
    }
    assert queues.pop("housekeeping") == "housekeeping"
    assert queues.pop("leaderboards") == "leaderboards"
    assert queues and all(
        "housekeeping" not in q and "leaderboards" not in q for q in queues.values()
    )
