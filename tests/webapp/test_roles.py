"""What each role may do is enforced on the server."""

import pytest

from tests.sending import tasks_held

pytestmark = pytest.mark.django_db


def test_guest_may_browse_but_not_reach_researcher_pages(client):
    assert client.get("/").status_code == 200
    assert client.get("/api/schema/").status_code == 200
    response = client.get("/jobs/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert (
        client.post("/api/jobs/", {"kind": "smoke"}, content_type="application/json").status_code
        == 403
    )


def test_player_cannot_reach_researcher_pages_or_apis(client, player):
    client.force_login(player)
    assert client.get("/jobs/").status_code == 403
    assert client.get("/admin/").status_code == 302  # the admin sends non-staff to its log-in
    response = client.post(
        "/api/jobs/", {"kind": "smoke", "config": {}}, content_type="application/json"
    )
    assert response.status_code == 403
    from webapp.jobs.models import Job

    assert Job.objects.count() == 0


def test_annotator_is_not_a_researcher(client, annotator):
    client.force_login(annotator)
    assert client.get("/jobs/").status_code == 403
    assert client.get("/api/jobs/").status_code == 403


def test_researcher_reaches_dashboard_admin_and_job_api(
    client, researcher, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    assert client.get("/jobs/").status_code == 200
    assert client.get("/admin/").status_code == 200
    with (
        tasks_held() as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post(
            "/api/jobs/",
            {"kind": "smoke", "config": {"message": "hi"}},
            content_type="application/json",
        )
    assert response.status_code == 202
    assert response["Location"] == f"/api/jobs/{response.json()['id']}/"
    send.assert_called_once()
    assert send.call_args.kwargs["kwargs"] == {"job_id": response.json()["id"]}


def test_invalid_job_config_is_refused_before_anything_is_queued(client, researcher):
    from webapp.jobs.models import Job

    client.force_login(researcher)
    with tasks_held() as send:
        bad = client.post(
            "/api/jobs/",
            {"kind": "smoke", "config": {"steps": "many"}},
            content_type="application/json",
        )
        unknown = client.post("/api/jobs/", {"kind": "nope"}, content_type="application/json")
        out_of_range = client.post(
            "/api/jobs/", {"kind": "smoke", "config": {"steps": 0}}, content_type="application/json"
        )
    assert bad.status_code == 400 and "steps" in bad.json()
    assert unknown.status_code == 400 and "kind" in unknown.json()
    assert out_of_range.status_code == 400 and "steps" in out_of_range.json()
    assert Job.objects.count() == 0
    send.assert_not_called()
