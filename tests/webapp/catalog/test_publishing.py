"""Issue 34 item 19: a trained checkpoint reaches players (play's "The model asks", the arena draw)
only once a researcher publishes it, and publishing needs an evaluation that shows valid
questions; the shipped guessers stay published."""

from __future__ import annotations

import pytest

from tests.webapp.play.support import seed_play_catalog, visitor_of
from webapp.arena.services import arena_guessers
from webapp.catalog.models import ModelSpec
from webapp.catalog.services import PUBLISH_MIN_QUESTIONS, model_spec_publish
from webapp.core.exceptions import ApplicationError
from webapp.jobs.kinds.training import model_spec_register_checkpoint
from webapp.jobs.models import Checkpoint, Job
from webapp.play import services as play
from webapp.play.models import Game, Turn
from webapp.play.selectors import new_game_choices


@pytest.fixture
def checkpoint_spec(db):
    """A 6-step SFT run's checkpoint, registered as its training job registers it."""
    seed_play_catalog()
    job = Job.objects.create(kind="sft", status="finished")
    checkpoint = Checkpoint.objects.create(job=job, step=6, path="/tmp/sft-step6")
    base = ModelSpec.objects.create(name="base-lm", kind="transformers", path="/tmp/base")
    return model_spec_register_checkpoint(
        checkpoint=checkpoint, kind="sft", base=base, base_path="/tmp/base"
    )


def offered(name: str) -> bool:
    in_play = name in {s.name for s in new_game_choices()["guessers"]}
    in_arena = name in {s.name for s in arena_guessers()}
    assert in_play == in_arena  # one filter for both
    return in_play


def evaluated(spec: ModelSpec, verdicts: list[str]) -> None:
    """An evaluation game of `spec` whose questions got `verdicts`."""
    job = Job.objects.create(kind="evaluation", status="stopped")
    game = Game.objects.create(secret="dog", mode="model", guesser=spec, job=job)
    Turn.objects.bulk_create(
        Turn(game=game, index=i, question=f"Is it q{i}?", verdict=v) for i, v in enumerate(verdicts)
    )


def test_a_trained_checkpoint_is_offered_to_no_player_until_published(checkpoint_spec, player):
    assert checkpoint_spec.published is False
    assert not offered(checkpoint_spec.name) and offered("infogain")
    for visitor in (visitor_of(None), visitor_of(player)):  # nor started by its name
        with pytest.raises(ApplicationError, match="not offered to players yet") as refused:
            play.game_start(visitor=visitor, role="answerer", guesser=checkpoint_spec.name)
        assert refused.value.status == 403
    evaluated(checkpoint_spec, ["yes", "no"] * (PUBLISH_MIN_QUESTIONS // 2))
    model_spec_publish(spec=checkpoint_spec)
    assert ModelSpec.objects.get(pk=checkpoint_spec.pk).published and offered(checkpoint_spec.name)


def test_publishing_is_refused_unless_an_evaluation_shows_valid_questions(checkpoint_spec):
    with pytest.raises(ApplicationError, match="evaluate it first .*hold 0 questions"):
        model_spec_publish(spec=checkpoint_spec)
    # the test run's gibberish: invalid, repeated, unknown; a few yes/no among them
    evaluated(checkpoint_spec, ["invalid"] * 60 + ["repeated", "unknown"] * 10 + ["no"] * 20)
    with pytest.raises(ApplicationError, match=r"only 20% of its 100 evaluated questions"):
        model_spec_publish(spec=checkpoint_spec)
    assert not ModelSpec.objects.get(pk=checkpoint_spec.pk).published
    evaluated(checkpoint_spec, ["yes", "no", "finished"] * 40)  # a later, better evaluation
    model_spec_publish(spec=checkpoint_spec)
    assert ModelSpec.objects.get(pk=checkpoint_spec.pk).published


def test_a_re_registered_checkpoint_keeps_the_researchers_choice(checkpoint_spec):
    ModelSpec.objects.filter(pk=checkpoint_spec.pk).update(published=True)
    checkpoint = Checkpoint.objects.get(model_spec=checkpoint_spec)
    again = model_spec_register_checkpoint(
        checkpoint=checkpoint, kind="sft", base=checkpoint_spec.parent, base_path="/tmp/base"
    )
    assert again.pk == checkpoint_spec.pk and again.published


def test_the_admin_publishes_through_the_check(client, researcher, checkpoint_spec):
    client.force_login(researcher)
    url = "/admin/catalog/modelspec/"
    post = {"action": "publish_models", "_selected_action": [checkpoint_spec.pk]}
    page = client.post(url, post, follow=True).content.decode()
    assert f"Not publishing {checkpoint_spec.name}: evaluate it first" in page
    assert not ModelSpec.objects.get(pk=checkpoint_spec.pk).published
    evaluated(checkpoint_spec, ["yes"] * PUBLISH_MIN_QUESTIONS)
    page = client.post(url, post, follow=True).content.decode()
    assert f"Published {checkpoint_spec.name}: it is offered to players." in page
    assert ModelSpec.objects.get(pk=checkpoint_spec.pk).published
    client.post(url, {"action": "unpublish_models", "_selected_action": [checkpoint_spec.pk]})
    assert not offered(checkpoint_spec.name)


def test_the_seeded_guessers_stay_published(db):
    from webapp.catalog.services import seed_model_specs
    from webapp.catalog.shipped import seed_guesser_specs

    seed_model_specs()
    shipped = seed_guesser_specs()
    assert {"tiny-20q-sft", "tiny-20q-starpo", "tiny-20q-cia"} <= set(shipped)
    for name in ["infogain", "random", *shipped]:
        assert ModelSpec.objects.get(name=name).published and offered(name)


def test_the_run_page_publishes_its_checkpoint_through_the_check(
    client, researcher, player, checkpoint_spec
):
    checkpoint = Checkpoint.objects.get(model_spec=checkpoint_spec)
    url = f"/jobs/checkpoints/{checkpoint.pk}/publish/"
    client.force_login(player)
    assert client.post(url).status_code == 403
    client.force_login(researcher)
    page = client.get(f"/jobs/{checkpoint.job_id}/").content.decode()
    assert "not offered to players" in page and f'action="{url}"' in page
    page = client.post(url, follow=True).content.decode()
    assert f"Not publishing {checkpoint_spec.name}: evaluate it first" in page
    evaluated(checkpoint_spec, ["no"] * PUBLISH_MIN_QUESTIONS)
    page = client.post(url, follow=True).content.decode()
    assert f"Published {checkpoint_spec.name}: it is offered to players." in page
    assert offered(checkpoint_spec.name)


def test_the_migration_unpublishes_the_guessers_jobs_had_registered(checkpoint_spec):
    from importlib import import_module

    from django.apps import apps

    migration = import_module("webapp.catalog.migrations.0005_modelspec_published")
    job = checkpoint_spec.produced_by
    judge = ModelSpec.objects.create(name="learned-job9", kind="learned", role="judge")
    ModelSpec.objects.filter(pk__in=[checkpoint_spec.pk, judge.pk]).update(
        published=True, produced_by=job
    )
    migration.unpublish_checkpoints(apps, None)
    published = dict(ModelSpec.objects.values_list("name", "published"))
    assert published[checkpoint_spec.name] is False  # the test run is off the menus
    assert published["learned-job9"] and published["infogain"] and published["base-lm"]
