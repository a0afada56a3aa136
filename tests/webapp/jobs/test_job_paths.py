"""Job paths the other tests leave out: the run page's cancel / resume / retry buttons, the admin
actions and the reaper of jobs whose worker went silent (the artifact download guard:
test_artifact_downloads.py)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from unittest import mock

import pytest
from django.conf import settings
from django.contrib import messages as django_messages
from django.contrib.messages import get_messages
from django.db.models.query import QuerySet
from django.utils import timezone

from tests.sending import tasks_held
from webapp.jobs.models import Job, JobLog, JobStatus
from workers.tasks import jobs_reap_stale_task

pytestmark = pytest.mark.django_db

SMOKE = {"message": "again", "steps": 2, "seconds_per_step": 0.0}


@pytest.fixture
def queue():
    """Every Celery message `jobs.run` would send; run the on-commit hooks to see them."""
    with tasks_held() as send:
        yield send


@pytest.fixture
def make_job(researcher):
    def make(status: str, **fields) -> Job:
        fields = {
            "kind": "smoke",
            "config": SMOKE,
            "status": status,
            "task_id": str(uuid.uuid4()),
            "created_by": researcher,
            **fields,
        }
        return Job.objects.create(**fields)

    return make


def messages_of(response) -> list[tuple[int, str]]:
    return [(m.level, str(m)) for m in get_messages(response.wsgi_request)]


def assert_sent(queue, job: Job) -> None:
    """Exactly one `jobs.run` message, for this job, on its queue, under its current task id."""
    queue.assert_called_once()
    call = queue.call_args
    assert call.kwargs["kwargs"] == {"job_id": job.pk}
    assert call.kwargs["queue"] == job.queue and call.kwargs["task_id"] == job.task_id


# --- retry (run page) -------------------------------------------------------------------------


@pytest.mark.parametrize("status", [JobStatus.FAILED, JobStatus.STOPPED])
def test_retry_button_queues_a_new_attempt_linked_to_the_old_job(
    status, rclient, researcher, make_job, queue, django_capture_on_commit_callbacks
):
    old = make_job(status, attempt=2, error="boom", finished_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        response = rclient.post(f"/jobs/{old.pk}/retry/")
    new = Job.objects.exclude(pk=old.pk).get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{new.pk}/"
    assert new.status == JobStatus.QUEUED and new.retry_of_id == old.pk and new.attempt == 3
    assert new.config == SMOKE and new.kind == "smoke" and new.created_by == researcher
    assert new.requeues == 0 and new.error == "" and new.finished_at is None
    assert new.task_id and new.task_id != old.task_id
    assert_sent(queue, new)
    old.refresh_from_db()
    assert old.status == status and old.error == "boom"  # the old attempt is left as it was
    page = rclient.get(response["Location"]).content.decode()
    assert f'retry of <a href="/jobs/{old.pk}/">job {old.pk}</a>' in page


@pytest.mark.parametrize("status", [JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.STOPPING])
def test_retry_button_refuses_an_active_job(
    status, rclient, make_job, queue, django_capture_on_commit_callbacks
):
    job = make_job(status)
    with django_capture_on_commit_callbacks(execute=True):
        response = rclient.post(f"/jobs/{job.pk}/retry/")
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert messages_of(response) == [(django_messages.ERROR, f"job {job.pk} is still {status}")]
    assert Job.objects.count() == 1 and not queue.called
    job.refresh_from_db()
    assert job.status == status


def test_retry_of_a_finished_job_is_a_new_attempt(
    rclient, make_job, queue, django_capture_on_commit_callbacks
):
    """By design (the run page offers "Retry as a new attempt" on every inactive job)."""
    old = make_job(JobStatus.FINISHED, result={"echo": "again"})
    with django_capture_on_commit_callbacks(execute=True):
        response = rclient.post(f"/jobs/{old.pk}/retry/")
    new = Job.objects.get(retry_of=old)
    assert response["Location"] == f"/jobs/{new.pk}/" and new.attempt == 2
    assert_sent(queue, new)
    old.refresh_from_db()
    assert old.status == JobStatus.FINISHED and old.result == {"echo": "again"}


# --- cancel and resume (run page) -------------------------------------------------------------


def test_cancel_button_stops_a_queued_job_at_once(rclient, make_job, queue):
    job = make_job(JobStatus.QUEUED)
    response = rclient.post(f"/jobs/{job.pk}/cancel/")
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert messages_of(response) == []
    job.refresh_from_db()
    assert job.status == JobStatus.STOPPED and job.finished_at is not None
    assert list(job.logs.values_list("message", flat=True)) == ["cancelled before it started"]
    assert not queue.called


def test_cancel_button_asks_a_running_job_to_stop(rclient, make_job):
    job = make_job(JobStatus.RUNNING, worker="w1")
    response = rclient.post(f"/jobs/{job.pk}/cancel/")
    assert response.status_code == 302 and messages_of(response) == []
    job.refresh_from_db()
    assert job.status == JobStatus.STOPPING and job.finished_at is None  # the runner stops itself


def test_cancel_of_a_stopping_job_is_a_quiet_no_op(rclient, make_job):
    job = make_job(JobStatus.STOPPING)
    response = rclient.post(f"/jobs/{job.pk}/cancel/")
    assert response.status_code == 302 and messages_of(response) == []
    job.refresh_from_db()
    assert job.status == JobStatus.STOPPING


@pytest.mark.parametrize("status", [JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED])
def test_cancel_button_refuses_a_job_that_is_over(status, rclient, make_job):
    job = make_job(status)
    response = rclient.post(f"/jobs/{job.pk}/cancel/", follow=True)
    assert response.redirect_chain == [(f"/jobs/{job.pk}/", 302)]
    text = f"job {job.pk} is {status}; only queued or running jobs can be cancelled"
    assert text in response.content.decode()  # shown on the run page
    job.refresh_from_db()
    assert job.status == status


@pytest.mark.parametrize("status", [JobStatus.FAILED, JobStatus.STOPPED])
def test_resume_button_puts_the_same_job_back_in_the_queue(
    status, rclient, make_job, queue, django_capture_on_commit_callbacks
):
    job = make_job(status, error="worker lost", finished_at=timezone.now(), progress=0.5)
    old_task = job.task_id
    with django_capture_on_commit_callbacks(execute=True):
        response = rclient.post(f"/jobs/{job.pk}/resume/")
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert messages_of(response) == [] and Job.objects.count() == 1  # no new attempt
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.error == "" and job.finished_at is None
    assert job.task_id and job.task_id != old_task and job.attempt == 1
    assert job.progress == 0.5  # continues from its last checkpoint
    assert list(job.logs.values_list("message", flat=True)) == ["resumed"]
    assert_sent(queue, job)


@pytest.mark.parametrize(
    "status", [JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.STOPPING, JobStatus.FINISHED]
)
def test_resume_button_refuses_other_states(
    status, rclient, make_job, queue, django_capture_on_commit_callbacks
):
    job = make_job(status)
    with django_capture_on_commit_callbacks(execute=True):
        response = rclient.post(f"/jobs/{job.pk}/resume/")
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    text = f"job {job.pk} is {status}; only stopped or failed jobs can be resumed"
    assert messages_of(response) == [(django_messages.ERROR, text)]
    job.refresh_from_db()
    assert job.status == status and not job.logs.exists() and not queue.called


# --- who may press the buttons ----------------------------------------------------------------


@pytest.mark.parametrize("verb", ["cancel", "resume", "retry"])
def test_players_and_annotators_get_403_and_change_nothing(
    verb, client, make_user, make_job, queue, django_capture_on_commit_callbacks
):
    jobs = {
        "cancel": make_job(JobStatus.RUNNING),
        "resume": make_job(JobStatus.FAILED),
        "retry": make_job(JobStatus.STOPPED),
    }
    job = jobs[verb]
    for role in ("player", "annotator"):
        client.force_login(make_user(role))
        with django_capture_on_commit_callbacks(execute=True):
            assert client.post(f"/jobs/{job.pk}/{verb}/").status_code == 403
    assert Job.objects.count() == 3 and not queue.called
    assert {j.pk: j.status for j in Job.objects.all()} == {j.pk: j.status for j in jobs.values()}


@pytest.mark.parametrize("verb", ["cancel", "resume", "retry"])
def test_guests_are_sent_to_log_in(verb, client, make_job, queue):
    job = make_job(JobStatus.FAILED if verb != "cancel" else JobStatus.QUEUED)
    response = client.post(f"/jobs/{job.pk}/{verb}/")
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/jobs/{job.pk}/{verb}/"
    job.refresh_from_db()
    assert job.status in (JobStatus.FAILED, JobStatus.QUEUED) and Job.objects.count() == 1


def test_actions_need_post_a_known_verb_and_an_existing_job(rclient, make_job):
    job = make_job(JobStatus.QUEUED)
    assert rclient.get(f"/jobs/{job.pk}/cancel/").status_code == 405
    assert rclient.post(f"/jobs/{job.pk}/delete/").status_code == 404
    assert rclient.post(f"/jobs/{job.pk + 1000}/cancel/").status_code == 404
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and not job.logs.exists()


# --- admin actions ----------------------------------------------------------------------------


def admin_action(client, action: str, jobs: list[Job], **kwargs):
    return client.post(
        "/admin/jobs/job/", {"action": action, "_selected_action": [j.pk for j in jobs]}, **kwargs
    )


def test_admin_cancel_action_stops_what_it_can_and_warns_about_the_rest(rclient, make_job):
    queued, running, finished = (
        make_job(s) for s in (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FINISHED)
    )
    response = admin_action(rclient, "cancel_jobs", [queued, running, finished])
    assert response.status_code == 302 and response["Location"] == "/admin/jobs/job/"
    got = {j.pk: j.status for j in Job.objects.all()}
    assert got == {
        queued.pk: JobStatus.STOPPED,
        running.pk: JobStatus.STOPPING,
        finished.pk: JobStatus.FINISHED,
    }
    assert sorted(messages_of(response)) == [
        (django_messages.INFO, "Asked 2 job(s) to stop."),
        (
            django_messages.WARNING,
            f"job {finished.pk} is finished; only queued or running jobs can be cancelled",
        ),
    ]


def test_admin_retry_action_queues_new_attempts_and_skips_active_jobs(
    rclient, researcher, make_job, queue, django_capture_on_commit_callbacks
):
    failed, stopped, running = (
        make_job(s) for s in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.RUNNING)
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_action(rclient, "retry_jobs", [failed, stopped, running])
    assert response.status_code == 302 and response["Location"] == "/admin/jobs/job/"
    retries = {j.retry_of_id: j for j in Job.objects.filter(retry_of__isnull=False)}
    assert set(retries) == {failed.pk, stopped.pk}  # none for the running job
    for new in retries.values():
        assert new.status == JobStatus.QUEUED and new.attempt == 2 and new.config == SMOKE
        assert new.created_by == researcher
    sent = sorted(c.kwargs["kwargs"]["job_id"] for c in queue.call_args_list)
    assert sent == sorted(j.pk for j in retries.values())
    assert (django_messages.WARNING, f"job {running.pk} is still running") in messages_of(response)
    assert {j.pk: j.status for j in (failed, stopped, running)} == dict(
        Job.objects.filter(pk__in=[failed.pk, stopped.pk, running.pk]).values_list("pk", "status")
    )


def test_admin_retry_action_says_which_jobs_it_queued(
    rclient, make_job, queue, django_capture_on_commit_callbacks
):
    failed = make_job(JobStatus.FAILED)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_action(rclient, "retry_jobs", [failed])
    new = Job.objects.get(retry_of=failed)
    told = [text for level, text in messages_of(response) if level < django_messages.WARNING]
    assert any(str(new.pk) in text for text in told), told


def test_admin_actions_are_closed_to_non_staff(client, player, make_job, queue):
    job = make_job(JobStatus.QUEUED)
    client.force_login(player)
    for action in ("cancel_jobs", "retry_jobs"):
        response = admin_action(client, action, [job])
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and Job.objects.count() == 1 and not queue.called


# --- the reaper -------------------------------------------------------------------------------


def silent_for(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


STALE = settings.JOB_STALE_SECONDS * 3


def test_reaper_requeues_a_running_job_whose_worker_went_silent(
    make_job, queue, django_capture_on_commit_callbacks
):
    job = make_job(JobStatus.RUNNING, worker="gpu-1:42", heartbeat_at=silent_for(STALE))
    old_task = job.task_id
    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_reap_stale_task()  # the beat task, run in-process
    assert report == {"requeued": [job.pk], "failed": [], "stopped": []}
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.requeues == 1 and job.worker == ""
    assert job.task_id and job.task_id != old_task and job.attempt == 1
    assert_sent(queue, job)
    entry = JobLog.objects.get(job=job)
    assert entry.level == "warning"
    assert entry.message.startswith("worker lost (no heartbeat from gpu-1:42 since ")
    assert entry.message.endswith("; re-queued")


def test_reaper_leaves_live_queued_and_finished_jobs_alone(
    make_job, queue, django_capture_on_commit_callbacks
):
    fresh = make_job(JobStatus.RUNNING, heartbeat_at=silent_for(settings.JOB_STALE_SECONDS / 5))
    others = [
        make_job(s, heartbeat_at=silent_for(STALE))
        for s in (JobStatus.QUEUED, JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED)
    ]
    before = dict(Job.objects.values_list("pk", "status"))
    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_reap_stale_task()
    assert report == {"requeued": [], "failed": [], "stopped": []}
    assert dict(Job.objects.values_list("pk", "status")) == before
    assert fresh.pk in before and len(before) == 1 + len(others)
    assert not queue.called and not JobLog.objects.exists()


def test_reaper_fails_a_job_after_two_requeues_with_a_clear_error(
    make_job, queue, django_capture_on_commit_callbacks
):
    job = make_job(JobStatus.RUNNING, worker="w9", heartbeat_at=silent_for(STALE))
    for n in (1, 2):  # its worker dies twice; each time the reaper re-queues it
        with django_capture_on_commit_callbacks(execute=True):
            assert jobs_reap_stale_task()["requeued"] == [job.pk]
        job.refresh_from_db()
        assert job.status == JobStatus.QUEUED and job.requeues == n
        # a new worker claims it and dies as well
        Job.objects.filter(pk=job.pk).update(
            status=JobStatus.RUNNING, worker="w9", heartbeat_at=silent_for(STALE)
        )
    assert queue.call_count == 2
    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_reap_stale_task()
    assert report == {"requeued": [], "failed": [job.pk], "stopped": []}
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.requeues == 2 and job.finished_at is not None
    assert job.error.startswith("worker lost (no heartbeat from w9 since ")
    assert job.error.endswith(") after 2 re-queues")
    assert queue.call_count == 2  # no third message
    # and it stays failed: the next sweep does nothing more
    assert jobs_reap_stale_task() == {"requeued": [], "failed": [], "stopped": []}


def test_reaper_marks_a_silent_stopping_job_stopped(
    make_job, queue, django_capture_on_commit_callbacks
):
    job = make_job(JobStatus.STOPPING, worker="w2", heartbeat_at=silent_for(STALE), requeues=2)
    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_reap_stale_task()
    assert report == {"requeued": [], "failed": [], "stopped": [job.pk]}
    job.refresh_from_db()
    assert job.status == JobStatus.STOPPED and job.finished_at is not None and job.error == ""
    entry = JobLog.objects.get(job=job)
    assert entry.level == "warning"
    assert entry.message.startswith("worker lost while stopping (no heartbeat from w2 since ")
    assert not queue.called


def test_reaper_spares_a_job_whose_heartbeat_arrives_after_the_sweep_selected_it(
    make_job, queue, django_capture_on_commit_callbacks
):
    job = make_job(JobStatus.RUNNING, worker="w3", heartbeat_at=silent_for(STALE))
    iterate = QuerySet.__iter__
    beats = []

    def select_then_beat(qs):
        rows = list(iterate(qs))
        if qs.model is Job and not beats:  # the worker's heartbeat thread wakes up just now
            beats.append(Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now()))
        return iter(rows)

    with (
        mock.patch.object(QuerySet, "__iter__", select_then_beat),
        django_capture_on_commit_callbacks(execute=True),
    ):
        report = jobs_reap_stale_task()
    assert beats == [1]  # the beat did land between the select and the update
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING and job.worker == "w3" and report["requeued"] == []
    assert not queue.called
