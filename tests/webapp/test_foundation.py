import pytest
from django.apps import apps
from django.contrib import admin
from django.db import IntegrityError, transaction
from django.urls import reverse

from webapp.catalog.models import ModelSpec, WordList
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.jobs.models import InvalidTransition, Job, JobStatus
from webapp.play.models import Game, Turn

pytestmark = pytest.mark.django_db


def test_seed_imports_word_lists_once_with_attribution_and_splits(no_word_lists):
    created = seed_word_lists()
    assert "dbrl/paper_test" in created and "lmrl/objects" in created
    assert seed_word_lists() == []  # idempotent
    paper_test = WordList.objects.get(name="dbrl/paper_test")
    assert paper_test.entries.count() == 433
    assert paper_test.license == "MIT" and "delta-belief-rl" in paper_test.source
    solved = WordList.objects.get(name="dbrl/solved")
    counts = {s: solved.entries.filter(split=s).count() for s in ("sft", "rl", "val", "test")}
    assert counts == {"sft": 341, "rl": 3612, "val": 238, "test": 487}
    objects = WordList.objects.get(name="lmrl/objects")
    assert objects.entries.filter(word__text="soccer ball", category="Sports").exists()
    airplane = objects.entries.get(
        word__text="airplane"
    )  # "Airplane;Plane": canonical name + aliases
    assert (
        airplane.stats["aliases"] == ["plane"]
        and not objects.entries.filter(word__text__contains=";").exists()
    )


def test_seed_registers_default_model_specs_idempotently():
    assert set(seed_model_specs()) >= {"kb", "infogain"}
    assert seed_model_specs() == []
    assert ModelSpec.objects.get(name="kb").can_judge
    assert ModelSpec.objects.get(name="infogain").can_guess


def test_job_status_machine_refuses_invalid_transitions():
    job = Job.objects.create(kind="smoke")
    assert job.status == JobStatus.QUEUED
    for ok in (JobStatus.RUNNING, JobStatus.STOPPING, JobStatus.STOPPED):
        job.check_transition(ok)
        job.status = ok
    with pytest.raises(InvalidTransition):
        job.check_transition(JobStatus.RUNNING)  # stopped -> running must go through queued
    job.status = JobStatus.FINISHED
    for target in JobStatus.values:
        assert not job.can_move_to(target)


def test_turn_index_is_unique_per_game():
    game = Game.objects.create(secret="dog")
    Turn.objects.create(game=game, index=0, question="Is it alive?", verdict="yes")
    with pytest.raises(IntegrityError), transaction.atomic():
        Turn.objects.create(game=game, index=0, question="Is it big?", verdict="no")


def test_eval_games_are_unique_per_job_word_and_sample():
    job = Job.objects.create(kind="smoke")
    Game.objects.create(secret="dog", job=job, sample_index=0)
    Game.objects.create(secret="dog")  # games outside jobs are not constrained
    Game.objects.create(secret="dog")
    with pytest.raises(IntegrityError), transaction.atomic():
        Game.objects.create(secret="dog", job=job, sample_index=0)


def test_every_model_is_registered_in_the_admin():
    ours = [
        m
        for m in apps.get_models()
        if m._meta.app_label in {"catalog", "play", "jobs", "labelling", "leaderboards"}
    ]
    assert len(ours) >= 14
    missing = [m.__name__ for m in ours if m not in admin.site._registry]
    assert missing == []


def test_admin_changelists_render_for_a_researcher(client, researcher):
    seed_word_lists()
    seed_model_specs()
    client.force_login(researcher)
    for model in admin.site._registry:
        if model._meta.app_label not in {"catalog", "play", "jobs", "labelling", "leaderboards"}:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        response = client.get(url)
        assert response.status_code == 200, url


def test_home_lists_word_lists(client):
    seed_word_lists()
    response = client.get("/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "dbrl/paper_test" in body and "433" in body


def test_signup_login_logout_flow(client):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "ada",
            "email": "ada@example.org",
            "password1": "correct-horse-battery",
            "password2": "correct-horse-battery",
        },
    )
    assert response.status_code == 302
    from django.contrib.auth import get_user_model

    ada = get_user_model().objects.get(username="ada")
    assert list(ada.groups.values_list("name", flat=True)) == ["player"]
    client.post("/accounts/logout/")
    assert "_auth_user_id" not in client.session
    response = client.post(
        "/accounts/login/", {"username": "ada", "password": "correct-horse-battery"}
    )
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(ada.pk)
    client.post("/accounts/logout/")
    bad = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert bad.status_code == 200 and "_auth_user_id" not in client.session
