"""The admin (issue 22, item 11): stored results are view-only for everyone, superusers included,
and its add-job page is the dashboard's generated config form, queuing through the same service."""

import pytest
from django.utils import timezone

from webapp.catalog.models import ModelSpec
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.jobs.models import Artifact, Checkpoint, Job, JobLog, Metric, WorkerHeartbeat
from webapp.labelling.models import DisagreementItem, JudgeVote, Label
from webapp.leaderboards.models import LeaderboardSnapshot
from webapp.play.models import Game, Turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser_client(client, make_user):
    user = make_user("researcher")
    user.is_superuser = True
    user.save()
    client.force_login(user)
    client.user = user
    return client


def stored_rows(user) -> dict[str, object]:
    """One row of every stored-result model, by its admin URL path."""
    job = Job.objects.create(kind="smoke", status="finished")
    kb = ModelSpec.objects.create(name="kb-test", kind="kb", role="judge")
    game = Game.objects.create(secret="apple", judge=kb, job=job)
    turn = Turn.objects.create(game=game, index=0, question="Is it a fruit?", verdict="yes")
    item = DisagreementItem.objects.create(secret="apple", question="Is it red?")
    return {
        "play/game": game,
        "play/turn": turn,
        "jobs/metric": Metric.objects.create(job=job, step=1, name="loss", value=0.5),
        "jobs/joblog": JobLog.objects.create(job=job, message="hello"),
        "jobs/workerheartbeat": WorkerHeartbeat.objects.create(
            hostname="w1", last_seen=timezone.now()
        ),
        "jobs/checkpoint": Checkpoint.objects.create(job=job, step=1, path="/tmp/x"),
        "jobs/artifact": Artifact.objects.create(job=job, kind="export-jsonl", name="a", path="/a"),
        "labelling/judgevote": JudgeVote.objects.create(
            item=item, secret="apple", question="Is it red?", judge_name="kb", verdict="yes"
        ),
        "labelling/label": Label.objects.create(item=item, annotator=user, verdict="yes"),
        "leaderboards/leaderboardsnapshot": LeaderboardSnapshot.objects.create(
            board="models", key="k"
        ),
    }


def test_stored_results_are_view_only_for_a_superuser(superuser_client):
    rows = stored_rows(superuser_client.user)
    for path, row in rows.items():
        base = f"/admin/{path}/"
        assert superuser_client.get(base).status_code == 200, path  # listed
        assert superuser_client.get(f"{base}{row.pk}/change/").status_code == 200, path  # shown
        assert superuser_client.get(f"{base}add/").status_code == 403, path
        assert superuser_client.post(f"{base}add/", {}).status_code == 403, path
        assert superuser_client.post(f"{base}{row.pk}/change/", {}).status_code == 403, path
        delete = superuser_client.post(f"{base}{row.pk}/delete/", {"post": "yes"})
        assert delete.status_code == 403, path
        assert type(row).objects.filter(pk=row.pk).exists(), path
    game = rows["play/game"]
    superuser_client.post(f"/admin/play/game/{game.pk}/change/", {"secret": "pear"})
    game.refresh_from_db()
    assert game.secret == "apple"  # a game's secret cannot be rewritten


def test_bulk_delete_is_not_offered_on_stored_results(superuser_client):
    rows = stored_rows(superuser_client.user)
    metric = rows["jobs/metric"]
    page = superuser_client.get("/admin/jobs/metric/").content.decode()
    assert "delete_selected" not in page
    response = superuser_client.post(
        "/admin/jobs/metric/", {"action": "delete_selected", "_selected_action": [metric.pk]}
    )
    assert response.status_code in (200, 302) and Metric.objects.filter(pk=metric.pk).exists()


def test_jobs_stay_launchable_and_cancellable_in_the_admin(superuser_client, no_queue):
    job = Job.objects.create(kind="smoke", status="queued")
    assert superuser_client.get("/admin/jobs/job/add/").status_code == 200
    superuser_client.post(
        "/admin/jobs/job/", {"action": "cancel_jobs", "_selected_action": [job.pk]}
    )
    job.refresh_from_db()
    assert job.status == "stopped"


def test_admin_add_job_chooses_a_kind_then_shows_the_generated_form(superuser_client):
    seed_word_lists()
    seed_model_specs()
    choose = superuser_client.get("/admin/jobs/job/add/").content.decode()
    assert '<select name="kind"' in choose and '<a href="?kind=evaluation">' in choose
    assert 'name="config"' not in choose
    page = superuser_client.get("/admin/jobs/job/add/?kind=evaluation").content.decode()
    dashboard = superuser_client.get("/jobs/new/evaluation/").content.decode()
    for name in ("guesser", "judge", "word_list", "split", "samples", "limit", "win_rule"):
        widget = dashboard[dashboard.index(f'name="{name}"') :].split(">")[0]
        assert f'name="{name}"' + widget.split(f'name="{name}"', 1)[1] in page, name
    assert 'min="1"' in page and 'max="256"' in page and "k: games per word" in page
    assert 'name="config"' not in page and "<textarea" not in page


def test_admin_add_job_rejects_an_invalid_config_with_field_errors_and_queues_nothing(
    superuser_client, no_queue
):
    seed_word_lists()
    seed_model_specs()
    form = {"kind": "evaluation", "guesser": "infogain", "judge": "kb"}
    form |= {"word_list": "dbrl/paper_test", "max_turns": "20", "seed": "0", "batch_size": "64"}
    form |= {"win_rule": "reference", "split": "bogus", "samples": "0", "limit": "-3"}
    form |= {"precision": "auto", "sampling": "model"}
    response = superuser_client.post("/admin/jobs/job/add/", form)
    page = response.content.decode()
    assert response.status_code == 200
    for name, message in [
        ("split", "bogus is not one of the available choices"),
        ("samples", "samples must be between 1 and 256"),
        ("limit", "limit must be 0 (all words) or positive"),
    ]:
        block = page[page.index(f"field-{name}") :].split("</fieldset>")[0][:1500]
        assert message in block.split('class="help"')[0], name
    assert Job.objects.count() == 0 and not no_queue.called
    form |= {"split": "", "samples": "2", "limit": "3"}
    response = superuser_client.post("/admin/jobs/job/add/", form)
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.config["samples"] == 2 and job.created_by == superuser_client.user
