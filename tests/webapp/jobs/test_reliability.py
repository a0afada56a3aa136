"""No stranded or double-run jobs: a failed publish is a 503 with the job id and is sent again by
the sweep (once), a job claimed twice runs once, and a superseded worker's writes are refused."""

from __future__ import annotations

import uuid
from datetime import timedelta
from unittest import mock

import pytest
from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerDown

from tests.sending import tasks_held
from webapp.jobs import heartbeats, registry, services
from webapp.jobs.models import Checkpoint, Job, JobLog, JobStatus, Metric
from webapp.jobs.reporter import DatabaseReporter, Fence, JobFenced

SMOKE = {"message": "fenced", "steps": 2, "seconds_per_step": 0.0}


@pytest.fixture
def broker_down():
    with tasks_held(side_effect=BrokerDown("connection refused")) as m:
        yield m


def age(job: Job, seconds: float, **fields) -> None:
    """Pretend the job was created (and published, if it was) `seconds` ago."""
    past = timezone.now() - timedelta(seconds=seconds)
    Job.objects.filter(pk=job.pk).update(created_at=past, **fields)


# --- publish after commit; a failed publish ---------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_api_submit_with_the_broker_down_is_503_with_the_job_id_and_the_job_stays_queued(
    rclient, broker_down
):
    response = rclient.post(
        "/api/jobs/", {"kind": "smoke", "config": SMOKE}, content_type="application/json"
    )
    assert response.status_code == 503
    body = response.json()
    job = Job.objects.get(pk=body["id"])
    assert response["Location"] == body["url"] and "queued again automatically" in body["detail"]
    assert job.status == JobStatus.QUEUED and job.published_at is None and job.task_id
    broker_down.assert_called_once()
    assert broker_down.call_args.kwargs == {
        "kwargs": {"job_id": job.pk},
        "queue": job.queue,
        "task_id": job.task_id,
    }


@pytest.mark.django_db(transaction=True)
def test_launch_form_with_the_broker_down_goes_to_the_run_page_with_a_warning(rclient, broker_down):
    response = rclient.post("/jobs/new/smoke/", {"message": "x", "steps": 1, "seconds_per_step": 0})
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.status == JobStatus.QUEUED and job.published_at is None


@pytest.mark.django_db(transaction=True)
def test_a_published_job_records_when(rclient):
    with tasks_held() as send:
        response = rclient.post(
            "/api/jobs/", {"kind": "smoke", "config": SMOKE}, content_type="application/json"
        )
    assert response.status_code == 202
    send.assert_called_once()
    assert Job.objects.get(pk=response.json()["id"]).published_at is not None


@pytest.mark.django_db(transaction=True)
def test_reaper_requeue_with_the_broker_down_leaves_the_job_for_the_sweep(broker_down):
    job = Job.objects.create(
        kind="smoke",
        config=SMOKE,
        status=JobStatus.RUNNING,
        task_id="t",
        heartbeat_at=timezone.now() - timedelta(hours=1),
        published_at=timezone.now(),
    )
    assert services.jobs_reap_stale()["requeued"] == [job.pk]
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.published_at is None and job.requeues == 1


@pytest.mark.django_db(transaction=True)
def test_admin_add_with_the_broker_down_stores_the_job_for_the_sweep_without_a_500(
    rclient, broker_down
):
    """The admin's own transaction commits after the view: the failure is logged, not raised."""
    response = rclient.post("/admin/jobs/job/add/", {"kind": "smoke", **SMOKE})
    job = Job.objects.get()
    assert response.status_code == 302 and broker_down.call_count == 1
    assert job.status == JobStatus.QUEUED and job.published_at is None


@pytest.mark.django_db(transaction=True)
def test_api_resume_with_the_broker_down_is_503_with_the_job_id(rclient, broker_down):
    job = Job.objects.create(kind="smoke", config=SMOKE, status=JobStatus.STOPPED, task_id="t")
    response = rclient.post(f"/api/jobs/{job.pk}/resume/")
    assert response.status_code == 503 and response.json()["id"] == job.pk
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.published_at is None and job.task_id != "t"


@pytest.mark.django_db(transaction=True)
def test_admin_evaluate_action_with_the_broker_down_warns_instead_of_a_500(rclient, broker_down):
    from webapp.catalog.models import ModelSpec
    from webapp.catalog.services import seed_model_specs, seed_word_lists

    seed_word_lists()
    seed_model_specs()
    spec = ModelSpec.objects.get(name="infogain")
    response = rclient.post(
        "/admin/catalog/modelspec/", {"action": "evaluate_models", "_selected_action": [spec.pk]}
    )
    job = Job.objects.get()
    assert (
        response.status_code == 302 and job.status == JobStatus.QUEUED and job.published_at is None
    )


# --- the republish sweep ------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_sweep_sends_an_unpublished_job_once_when_the_broker_is_back(broker_down):
    with pytest.raises(services.JobNotPublished):
        services.job_submit(kind="smoke", params=SMOKE)
    job = Job.objects.get()
    assert services.jobs_republish_lost() == []  # too young: its own publish may still be under way
    age(job, services.PUBLISH_GRACE_SECONDS + 1)
    assert services.jobs_republish_lost() == []  # the broker is still down
    assert Job.objects.get(pk=job.pk).published_at is None
    broker_down.side_effect = None
    assert services.jobs_republish_lost() == [job.pk]
    assert services.jobs_republish_lost() == []  # once
    sent = [c for c in broker_down.call_args_list if c.kwargs["task_id"] == job.task_id]
    assert (
        len(sent) == 3
    )  # the submit, the sweep while the broker was down, the one that went through
    assert Job.objects.get(pk=job.pk).published_at is not None
    assert JobLog.objects.filter(job=job, message__contains="published again").count() == 1


@pytest.mark.django_db(transaction=True)
def test_sweep_republishes_a_lost_message_exactly_once_and_leaves_held_ones_alone():
    """On the test run's real broker (files, or Redis with REDIS_URL): a message still held is left
    alone, one the broker lost (e.g. Redis restarted without persistence) is sent again once."""
    queue = f"test-sweep-{uuid.uuid4().hex[:8]}"
    job = Job.objects.create(kind="smoke", config=SMOKE, queue=queue, task_id=str(uuid.uuid4()))
    services._publish(job.pk, queue, job.task_id)
    try:
        assert services.broker_holds(queue, job.task_id) is True
        age(
            job,
            settings.JOB_REPUBLISH_SECONDS + 1,
            published_at=timezone.now() - timedelta(hours=1),
        )
        assert services.jobs_republish_lost() == []  # held: a worker will take it
        _drop_messages(queue)
        assert services.broker_holds(queue, job.task_id) is False
        assert services.jobs_republish_lost() == [job.pk]
        assert services.jobs_republish_lost() == []
        assert services.broker_holds(queue, job.task_id) is True
    finally:
        _drop_messages(queue)


def _drop_messages(queue: str) -> None:
    url = settings.CELERY_BROKER_URL
    if url.startswith("redis"):
        import redis

        redis.Redis.from_url(url).delete(queue)
    else:
        from pathlib import Path

        for path in Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]).glob(
            f"*.{queue}.msg"
        ):
            path.unlink()


@pytest.mark.django_db
def test_sweep_leaves_running_finished_and_fresh_jobs_alone():
    fresh = Job.objects.create(kind="smoke", config=SMOKE, task_id="a")
    running = Job.objects.create(kind="smoke", config=SMOKE, task_id="b", status=JobStatus.RUNNING)
    finished = Job.objects.create(
        kind="smoke", config=SMOKE, task_id="c", status=JobStatus.FINISHED
    )
    for job in (running, finished):
        age(job, 3600)
    with tasks_held() as send:
        assert services.jobs_republish_lost() == []
    send.assert_not_called()
    assert fresh.pk


# --- claimed twice, run once ----------------------------------------------------------------------
@pytest.mark.django_db
def test_a_job_whose_message_arrives_twice_runs_once():
    job = Job.objects.create(kind="smoke", config=SMOKE, task_id="t")
    assert services.job_run(job_id=job.pk) == JobStatus.FINISHED
    assert services.job_run(job_id=job.pk) == "skipped (finished)"
    job.refresh_from_db()
    assert job.claim == 1 and job.metrics.filter(name="smoke/step").count() == 2


@pytest.mark.django_db
def test_claims_count_up_and_a_second_claim_of_the_same_queued_state_loses():
    job = Job.objects.create(kind="smoke", config=SMOKE, task_id="t")
    assert services._claim(job.pk, "w1") == 1
    assert services._claim(job.pk, "w2") is None  # running: nothing to claim
    Job.objects.filter(pk=job.pk).update(status=JobStatus.QUEUED)  # the reaper re-queued it
    assert services._claim(job.pk, "w2") == 2
    assert Job.objects.get(pk=job.pk).worker == "w2"


# --- fencing: a superseded worker's writes are refused ----------------------------------------
@pytest.fixture
def superseded(db):
    """A job claimed by w1 (claim 1), re-queued by the reaper and claimed by w2 (claim 2)."""
    job = Job.objects.create(kind="smoke", config=SMOKE, task_id="t")
    assert services._claim(job.pk, "w1") == 1
    Job.objects.filter(pk=job.pk).update(status=JobStatus.QUEUED, heartbeat_at=None)
    assert services._claim(job.pk, "w2") == 2
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=30))
    job.refresh_from_db()
    return job


def test_stale_status_moves_are_refused(superseded):
    for target in (JobStatus.FINISHED, JobStatus.FAILED):
        assert not services._move(
            superseded.pk, [JobStatus.RUNNING], target, where=Fence(superseded.pk, 1).where
        )
    assert services._move(
        superseded.pk, [JobStatus.RUNNING], JobStatus.FINISHED, where=Fence(superseded.pk, 2).where
    )


def test_stale_heartbeat_is_refused_and_stops(superseded):
    before = superseded.heartbeat_at
    beat = heartbeats.Heartbeat(Fence(superseded.pk, 1), "w1", "cpu")
    beat.beat()
    assert beat.stopped.is_set()
    assert Job.objects.get(pk=superseded.pk).heartbeat_at == before
    owner = heartbeats.Heartbeat(Fence(superseded.pk, 2), "w2", "cpu")
    owner.beat()
    assert not owner.stopped.is_set() and Job.objects.get(pk=superseded.pk).heartbeat_at > before


def test_stale_progress_metric_log_checkpoint_and_artifact_writes_are_refused(superseded, tmp_path):
    stale = DatabaseReporter(superseded, fence=Fence(superseded.pk, 1))
    writes = [
        lambda: stale.progress(0.9, "stale"),
        lambda: stale.metrics(5, {"loss": 1.0}),
        lambda: stale.log("stale"),
        lambda: stale.checkpoint(5, tmp_path / "checkpoint-5"),
        lambda: stale.artifact("export-jsonl", "x", tmp_path / "x.jsonl"),
        stale.ensure_owner,
        stale.should_stop,
    ]
    for write in writes:
        with pytest.raises(JobFenced):
            write()
    job = Job.objects.get(pk=superseded.pk)
    assert job.progress == 0 and job.status == JobStatus.RUNNING and job.claim == 2
    assert (
        not Metric.objects.exists()
        and not Checkpoint.objects.exists()
        and not JobLog.objects.exists()
    )
    assert not job.artifacts.exists()
    owner = DatabaseReporter(superseded, fence=Fence(superseded.pk, 2))
    owner.metrics(5, {"loss": 1.0})
    owner.checkpoint(5, tmp_path / "checkpoint-5")
    assert Metric.objects.count() == 1 and Checkpoint.objects.count() == 1


def test_a_stale_fenced_transaction_writes_nothing(superseded):
    stale = DatabaseReporter(superseded, fence=Fence(superseded.pk, 1))
    with pytest.raises(JobFenced), stale.fenced():
        JobLog.objects.create(job=superseded, message="must not be stored")
    assert not JobLog.objects.exists()


def test_writes_after_the_job_left_running_are_refused_even_under_the_latest_claim(superseded):
    Job.objects.filter(pk=superseded.pk).update(
        status=JobStatus.QUEUED
    )  # re-queued, not claimed yet
    with pytest.raises(JobFenced):
        DatabaseReporter(superseded, fence=Fence(superseded.pk, 2)).metrics(1, {"x": 1.0})


def test_a_training_callback_will_not_save_a_checkpoint_folder_once_fenced(superseded):
    from transformers import TrainerControl, TrainerState

    from training.common.trainer import ReporterCallback

    callback = ReporterCallback(
        DatabaseReporter(superseded, fence=Fence(superseded.pk, 1)), {}, is_adapter=False
    )
    control = TrainerControl(should_save=True)
    callback.reporter._last_poll = float(
        "inf"
    )  # the rate-limited stop poll is not what fences here
    with pytest.raises(JobFenced):
        callback.on_step_end(None, TrainerState(), control)


# --- a worker that wakes up after being superseded stops quietly ----------------------------------
def _runner_that_is_superseded(then):
    """A runner whose worker is paused mid-run: meanwhile the reaper re-queues the job and another
    worker claims and finishes it; then this one wakes and does `then(reporter)`."""

    def run(config, reporter):
        reporter.metrics(0, {"before": 1.0})
        Job.objects.filter(pk=reporter.job_id).update(status=JobStatus.QUEUED)
        assert services._claim(reporter.job_id, "other-worker") == 2
        Job.objects.filter(pk=reporter.job_id).update(
            status=JobStatus.FINISHED, result={"by": "other"}
        )
        then(reporter)
        return {"by": "stale"}

    return run


def _wake_and_write(reporter):
    reporter.metrics(1, {"after": 1.0})


def _wake_and_hit_a_unique_key(reporter):
    raise IntegrityError("UNIQUE constraint failed: play_game.job_id, play_game.secret")


def _wake_and_finish(reporter):
    pass


@pytest.mark.django_db(
    transaction=True
)  # job_run closes a connection left in an error, as in a worker
@pytest.mark.parametrize("then", [_wake_and_write, _wake_and_hit_a_unique_key, _wake_and_finish])
def test_a_superseded_worker_neither_fails_nor_overwrites_the_job(then):
    job = Job.objects.create(kind="smoke", config=SMOKE, task_id="t")
    with mock.patch.object(
        registry.JobKind, "runner_fn", return_value=_runner_that_is_superseded(then)
    ):
        assert services.job_run(job_id=job.pk, worker="paused-worker") == "superseded"
    job.refresh_from_db()
    assert job.status == JobStatus.FINISHED and job.result == {"by": "other"} and job.error == ""
    assert job.claim == 2 and job.worker == "other-worker"
    assert list(job.metrics.values_list("name", flat=True)) == ["before"]


@pytest.mark.django_db(transaction=True)
def test_a_lost_database_connection_requeues_the_job_instead_of_failing_it():
    from django.db import OperationalError

    def run(config, reporter):
        reporter.metrics(0, {"before": 1.0})
        raise OperationalError("server closed the connection unexpectedly")

    job = Job.objects.create(kind="smoke", config=SMOKE, task_id="t")
    with (
        mock.patch.object(registry.JobKind, "runner_fn", return_value=run),
        tasks_held() as send,
    ):
        assert services.job_run(job_id=job.pk) == JobStatus.QUEUED
        job.refresh_from_db()
        assert (
            job.status == JobStatus.QUEUED
            and job.requeues == 1
            and job.error == ""
            and job.task_id != "t"
        )
        send.assert_called_once_with(
            "jobs.run", kwargs={"job_id": job.pk}, queue=job.queue, task_id=job.task_id
        )
        Job.objects.filter(pk=job.pk).update(requeues=services.MAX_REQUEUES)
        assert services.job_run(job_id=job.pk) == JobStatus.FAILED  # not for ever
    assert "server closed the connection" in Job.objects.get(pk=job.pk).error


@pytest.mark.django_db(transaction=True)
def test_on_postgres_a_paused_worker_cannot_hold_the_job_row_past_the_idle_limit(settings):
    """A worker stopped (SIGSTOP) inside its fenced write holds the job row's lock; the server ends
    that session after JOB_FENCE_IDLE_SECONDS, so the reaper waits that long at most."""
    import threading
    import time

    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("idle_in_transaction_session_timeout is a Postgres setting")
    settings.JOB_FENCE_IDLE_SECONDS = 1
    job = Job.objects.create(kind="smoke", config=SMOKE, task_id="t")
    assert services._claim(job.pk, "w1") == 1
    inside, outcome = threading.Event(), {}

    def paused_worker():
        try:
            with Fence(job.pk, 1).transaction():
                inside.set()
                time.sleep(4)  # stopped mid-write
                JobLog.objects.create(job_id=job.pk, message="late write")
        except Exception as exc:  # the server ended the session
            outcome["error"] = exc
        finally:
            connection.close()

    worker = threading.Thread(target=paused_worker)
    worker.start()
    assert inside.wait(10)
    started = time.monotonic()
    moved = services._move(job.pk, [JobStatus.RUNNING], JobStatus.QUEUED, where={"claim": 1})
    waited = time.monotonic() - started
    worker.join(10)
    assert moved and waited < 3.5, waited
    assert "error" in outcome and not JobLog.objects.filter(message="late write").exists()


@pytest.mark.django_db
def test_a_fence_inside_a_callers_transaction_leaves_it_its_own_idle_limit(settings):
    """The fence's limit is for its own block: a caller's enclosing transaction (a test's, or a job
    that writes games around it) must not be ended by the server for idling afterwards."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("idle_in_transaction_session_timeout is a Postgres setting")

    def limit() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW idle_in_transaction_session_timeout")
            return cursor.fetchone()[0]

    settings.JOB_FENCE_IDLE_SECONDS = 7
    job = Job.objects.create(kind="smoke", config=SMOKE, task_id="t")
    assert services._claim(job.pk, "w1") == 1
    before = limit()
    with Fence(job.pk, 1).transaction():
        assert limit() == "7s"
    assert limit() == before != "7s"


@pytest.mark.django_db
def test_a_result_with_nan_or_infinity_is_stored_with_null_in_their_place():
    # PostgreSQL's JSON refuses NaN and Infinity: a diverged training loss must not fail the job
    job = Job.objects.create(kind="smoke", config=SMOKE, task_id="nan")
    result = {"last_loss": float("nan"), "steps": 3, "curve": [1.5, float("inf")]}
    with mock.patch.object(registry.JobKind, "runner_fn", return_value=lambda c, r: result):
        assert services.job_run(job_id=job.pk) == JobStatus.FINISHED
    job.refresh_from_db()
    assert job.result == {"last_loss": None, "steps": 3, "curve": [1.5, None]}


@pytest.mark.django_db
def test_a_diverged_runs_nan_metrics_and_checkpoint_values_do_not_fail_its_writes(tmp_path):
    job = Job.objects.create(kind="smoke", config=SMOKE, status=JobStatus.RUNNING)
    reporter = DatabaseReporter(job)
    reporter.metrics(4, {"loss": float("nan"), "grad_norm": float("inf"), "reward": 0.5})
    assert list(Metric.objects.filter(job=job).values_list("name", "value")) == [("reward", 0.5)]
    reporter.checkpoint(4, tmp_path, metrics={"loss": float("nan"), "step": 4})
    assert Checkpoint.objects.get(job=job).metrics == {"loss": None, "step": 4}
    reporter.artifact("pairs", "pairs.jsonl", tmp_path / "none", meta={"gap": float("-inf")})
    assert job.artifacts.get().meta == {"gap": None}
