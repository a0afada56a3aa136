"""The `judge` job through a real worker: it goes to the cpu queue even where model-heavy jobs go to
a GPU queue, trains there and registers its judge."""

from __future__ import annotations

import pytest

from tests.webapp.judge_rows import small_reference_rows
from tests.workers.conftest import wait_for
from training.judge.data import write_rows
from webapp.catalog.models import ModelSpec
from webapp.jobs.models import Job, JobStatus

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_judge_job_runs_on_a_cpu_only_worker(
    start_worker, client, researcher, settings, tmp_path
):
    settings.JOBS_GPU_QUEUE = (
        "gpu"  # model-heavy kinds would wait for a GPU worker; this one must not
    )
    rows = write_rows(small_reference_rows(), tmp_path / "rows.jsonl")
    worker = start_worker(settings.CELERY_BROKER_URL, settings.DATA_DIR)  # listens on cpu only
    client.force_login(researcher)
    response = client.post(
        "/api/jobs/",
        {
            "kind": "judge",
            "config": {
                "dataset": "file",
                "data_path": str(rows),
                "epochs": 2,
                "dim": 8,
                "hidden": 16,
                "batch_size": 32,
                "cpu_threads": 1,
            },
        },
        content_type="application/json",
    )
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["id"])
    assert job.queue == "cpu"
    wait_for(
        lambda: Job.objects.get(pk=job.pk).status in (JobStatus.FINISHED, JobStatus.FAILED),
        timeout=180,
        what=f"the judge job to finish; worker log:\n{worker.log()}",
    )
    job.refresh_from_db()
    assert job.status == JobStatus.FINISHED, job.error
    assert job.result["rows_by_source"] == {"file": len(small_reference_rows())}
    assert ModelSpec.objects.get(name=f"learned-job{job.pk}").path == job.result["weights"]
