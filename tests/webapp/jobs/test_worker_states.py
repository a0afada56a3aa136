"""Issue 46 item 4: the jobs page showed a live idle worker and a dead one both as "silent" (a
worker beat only while it ran a job). Job workers beat between jobs too, and the page says busy,
idle or silent."""

from __future__ import annotations

import os
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from webapp.jobs.heartbeats import WorkerIdleHeartbeat, worker_idle_beat
from webapp.jobs.models import WorkerHeartbeat
from webapp.jobs.selectors import workers_health

pytestmark = pytest.mark.django_db


def _state_cell(html: str, hostname: str) -> str:
    row = re.search(rf"<td>{re.escape(hostname)}</td>.*?</tr>", html, flags=re.S).group(0)
    return re.sub(r"<[^>]+>", "", re.findall(r"<td[^>]*>.*?</td>", row, flags=re.S)[-1])


def test_the_jobs_page_tells_busy_idle_and_silent_workers_apart(rclient, settings):
    now = timezone.now()
    long_ago = now - timedelta(seconds=settings.JOB_STALE_SECONDS + 30)
    WorkerHeartbeat.objects.create(hostname="busy:1", queues="cpu", active_job_id=7, last_seen=now)
    WorkerHeartbeat.objects.create(hostname="idle:2", queues="cpu", last_seen=now)
    WorkerHeartbeat.objects.create(hostname="dead:3", queues="cpu", last_seen=long_ago)
    states = {w["hostname"]: (w["state"], w["alive"]) for w in workers_health()}
    assert states == {
        "busy:1": ("busy", True),
        "idle:2": ("idle", True),
        "dead:3": ("silent", False),
    }
    html = rclient.get("/jobs/").content.decode()
    assert _state_cell(html, "busy:1") == "running a job"
    assert _state_cell(html, "idle:2") == "idle (waiting for a job)"
    assert _state_cell(html, "dead:3") == "silent: stopped or unreachable"
    assert f"no heartbeat for over {settings.JOB_STALE_SECONDS} s" in html


def test_an_idle_beat_moves_last_seen_only():
    worker_idle_beat(worker="w:1", queues="cpu,gpu")
    row = WorkerHeartbeat.objects.get(hostname="w:1")
    assert (row.queues, row.active_job_id) == ("cpu,gpu", None)
    WorkerHeartbeat.objects.filter(pk=row.pk).update(
        active_job_id=5, queues="gpu", last_seen=timezone.now() - timedelta(minutes=5)
    )
    worker_idle_beat(worker="w:1", queues="cpu,gpu")  # while the job's own heartbeat runs
    row.refresh_from_db()
    assert (row.queues, row.active_job_id) == ("gpu", 5)  # the job's heartbeat's to write
    assert timezone.now() - row.last_seen < timedelta(seconds=5)


@pytest.mark.django_db(transaction=True)
def test_the_idle_heartbeat_thread_beats_at_once_and_then_stops(settings):
    settings.JOB_HEARTBEAT_SECONDS = 60
    beat = WorkerIdleHeartbeat("w:2", "cpu")
    beat.start()
    try:
        for _ in range(100):
            if WorkerHeartbeat.objects.filter(hostname="w:2").exists():
                break
            beat.join(0.05)
        assert WorkerHeartbeat.objects.filter(hostname="w:2", active_job_id=None).exists()
    finally:
        beat.stopped.set()
        beat.join(5)
    assert not beat.is_alive()


def test_only_processes_of_job_queues_start_one(monkeypatch):
    from workers import tasks
    from workers.celery import app

    started = []
    monkeypatch.setattr(WorkerIdleHeartbeat, "start", lambda self: started.append(self))
    queues = app.amqp.queues
    for consumed, expected in ((["housekeeping"], None), (["cpu", "gpu"], "cpu,gpu")):
        monkeypatch.setattr(queues, "_consume_from", {name: queues[name] for name in consumed})
        beat = tasks._idle_heartbeat()
        assert (beat.queues if beat else None) == expected
    assert len(started) == 1 and started[0].worker.endswith(f":{os.getpid()}")
