"""A launch form queues one job per rendering: a double click or a resent form shows the job the
first submission queued instead of queuing a second (the dashboard's form and the admin's)."""

import re
import uuid
from unittest import mock

import pytest
from django.contrib.messages import get_messages

from webapp.jobs.models import Job

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seeded")]
SMOKE = {"message": "hi", "steps": "2", "seconds_per_step": "0"}


def token_of(page: str) -> str:
    return re.search(r'<input type="hidden" name="submission" value="([0-9a-f]{32})"', page)[1]


def test_each_rendering_of_the_form_carries_its_own_token(rclient):
    first = token_of(rclient.get("/jobs/new/smoke/").content.decode())
    second = token_of(rclient.get("/jobs/new/smoke/").content.decode())
    assert uuid.UUID(first) != uuid.UUID(second)  # both well-formed, and not the same


def test_the_same_form_sent_twice_queues_one_job_and_shows_it(
    rclient, no_queue, django_capture_on_commit_callbacks
):
    token = token_of(rclient.get("/jobs/new/smoke/").content.decode())
    with django_capture_on_commit_callbacks(execute=True):
        first = rclient.post("/jobs/new/smoke/", {**SMOKE, "submission": token})
    job = Job.objects.get()
    assert first.status_code == 302 and first.url == f"/jobs/{job.pk}/"
    with django_capture_on_commit_callbacks(execute=True):
        again = rclient.post("/jobs/new/smoke/", {**SMOKE, "submission": token})
    assert again.status_code == 302 and again.url == f"/jobs/{job.pk}/"
    assert Job.objects.count() == 1 and no_queue.call_count == 1
    said = [str(m) for m in get_messages(again.wsgi_request)]
    assert f"This form was already submitted: it queued job {job.pk}." in said
    assert "submission" not in job.config  # the token is not part of the config


def test_two_renderings_queue_two_jobs(rclient, no_queue):
    for _ in range(2):
        token = token_of(rclient.get("/jobs/new/smoke/").content.decode())
        assert rclient.post("/jobs/new/smoke/", {**SMOKE, "submission": token}).status_code == 302
    assert Job.objects.count() == 2


def test_a_refused_form_corrected_and_sent_with_its_token_queues(rclient, no_queue):
    token = token_of(rclient.get("/jobs/new/smoke/").content.decode())
    refused = rclient.post("/jobs/new/smoke/", {**SMOKE, "steps": "0", "submission": token})
    assert refused.status_code == 200 and Job.objects.count() == 0
    assert token_of(refused.content.decode()) == token  # the re-shown form keeps its token
    queued = rclient.post("/jobs/new/smoke/", {**SMOKE, "submission": token})
    assert queued.status_code == 302 and Job.objects.count() == 1


def test_the_admin_add_form_is_once_only_too(rclient, researcher, no_queue):
    researcher.is_staff = researcher.is_superuser = True
    researcher.save()
    page = rclient.get("/admin/jobs/job/add/?kind=smoke").content.decode()
    form = {"kind": "smoke", **SMOKE, "submission": token_of(page)}
    assert rclient.post("/admin/jobs/job/add/", form).status_code == 302
    assert rclient.post("/admin/jobs/job/add/", form).status_code == 302
    assert Job.objects.count() == 1


def test_a_cache_outage_does_not_refuse_a_launch(rclient, no_queue):
    token = token_of(rclient.get("/jobs/new/smoke/").content.decode())
    with mock.patch("webapp.jobs.forms.cache") as cache:
        cache.add.side_effect = cache.set.side_effect = ConnectionError("cache down")
        response = rclient.post("/jobs/new/smoke/", {**SMOKE, "submission": token})
    assert response.status_code == 302 and Job.objects.count() == 1


@pytest.mark.parametrize("token", [None, "", "not-a-token", "x" * 5000])
def test_a_form_without_a_well_formed_token_still_queues(rclient, no_queue, token):
    form = SMOKE if token is None else {**SMOKE, "submission": token}
    assert rclient.post("/jobs/new/smoke/", form).status_code == 302
    assert rclient.post("/jobs/new/smoke/", form).status_code == 302
    assert Job.objects.count() == 2  # nothing to tell a resend from a new launch by


def test_a_launch_that_failed_unexpectedly_can_be_sent_again(rclient, no_queue):
    token = token_of(rclient.get("/jobs/new/smoke/").content.decode())
    failing = mock.patch("webapp.jobs.services.job_submit", side_effect=RuntimeError("db down"))
    with failing, pytest.raises(RuntimeError):
        rclient.post("/jobs/new/smoke/", {**SMOKE, "submission": token})
    again = rclient.post("/jobs/new/smoke/", {**SMOKE, "submission": token})
    job = Job.objects.get()  # before: "already submitted and being queued", and no job at all
    assert again.status_code == 302 and again.url == f"/jobs/{job.pk}/"


def test_a_form_sent_again_with_other_settings_queues_them(rclient, no_queue):
    """Back to the launched form, one setting changed, launched again: a second job, not the
    first one shown (a resent form is the same token with the same settings)."""
    token = token_of(rclient.get("/jobs/new/smoke/").content.decode())
    assert rclient.post("/jobs/new/smoke/", {**SMOKE, "submission": token}).status_code == 302
    changed = rclient.post("/jobs/new/smoke/", {**SMOKE, "steps": "3", "submission": token})
    second = Job.objects.order_by("-pk").first()
    assert Job.objects.count() == 2 and second.config["steps"] == 3
    assert changed.url == f"/jobs/{second.pk}/"
