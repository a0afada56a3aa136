"""Issue 46 item 4: a job worker beats between jobs too (workers/celery.py), under the name its
jobs run under, so the jobs page shows it idle rather than silent."""

from __future__ import annotations

import pytest

from tests.workers.conftest import filesystem_transport_options, wait_for
from tests.workers.test_round_trip import publish, status_of
from webapp.jobs.models import Job, JobStatus, WorkerHeartbeat
from webapp.jobs.selectors import workers_health

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_an_idle_job_worker_beats_under_the_name_its_jobs_run_under(start_worker, tmp_path):
    worker = start_worker("filesystem://", tmp_path)  # JOB_HEARTBEAT_SECONDS=1
    mine = WorkerHeartbeat.objects.filter(hostname__endswith=f":{worker.proc.pid}")
    wait_for(mine.exists, what=f"an idle heartbeat; worker log:\n{worker.log()}")
    row = mine.get()
    assert (row.queues, row.active_job_id) == ("cpu", None)
    assert [w["state"] for w in workers_health() if w["hostname"] == row.hostname] == ["idle"]
    first_seen = row.last_seen
    wait_for(lambda: mine.get().last_seen > first_seen, what="a second idle heartbeat")

    job = Job.objects.create(kind="smoke", config={"steps": 1, "seconds_per_step": 0})
    publish(job, "filesystem://", filesystem_transport_options(tmp_path))
    wait_for(lambda: status_of(job) == JobStatus.FINISHED, what=f"the job; log:\n{worker.log()}")
    assert job.worker == row.hostname  # one row per worker, busy or idle
    assert mine.get().active_job_id is None
