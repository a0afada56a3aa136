"""The paper's settings where a researcher launches jobs (issue 48): StarPO's λ through the forms
and the API, validation words that meet the training words refused before queueing, the teacher
pool without held-out words, and trained guessers sampled as the paper evaluates."""

from __future__ import annotations

import pytest

from webapp.catalog.models import ModelSpec, WordList
from webapp.catalog.services import SeedEntry, seed_word_lists, word_list_create
from webapp.jobs import registry
from webapp.jobs.forms import config_form_class
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db


def test_starpo_from_the_form_or_the_api_takes_lambda_zero_unless_set():
    kind = registry.get_kind("grpo")
    assert registry.build_config(kind, {"advantage": "trajectory"}).belief_coef == 0.0
    assert (
        registry.build_config(kind, {"advantage": "trajectory", "belief_coef": ""}).belief_coef
        == 0.0
    )
    assert registry.build_config(kind, {}).belief_coef == 0.1
    assert (
        registry.build_config(kind, {"advantage": "trajectory", "belief_coef": 0.2}).belief_coef
        == 0.2
    )
    stored = registry.config_to_dict(registry.build_config(kind, {"advantage": "trajectory"}))
    assert stored["belief_coef"] == 0.0  # recorded resolved
    field = config_form_class(kind)().fields["belief_coef"]
    assert not field.required and field.initial is None  # blank: the paper's for the advantage


def test_a_grpo_job_validating_on_its_training_words_is_refused_with_a_400(rclient):
    word_list_create(name="g/train", entries=[SeedEntry("dog"), SeedEntry("apple")])
    word_list_create(name="g/val", entries=[SeedEntry("apple"), SeedEntry("car")])
    config = {"word_list": "g/train", "val_word_list": "g/val", "val_secrets": 1}
    response = rclient.post(
        "/api/jobs/", {"kind": "grpo", "config": config}, content_type="application/json"
    )
    assert response.status_code == 400  # the stored lists, compared before queueing
    assert "allow_val_overlap" in " ".join(response.json()["val_word_list"])
    shipped = {"word_list": "dbrl/paper_val", "val_word_list": "dbrl/paper_val"}
    response = rclient.post(
        "/api/jobs/", {"kind": "grpo", "config": shipped}, content_type="application/json"
    )
    assert response.status_code == 400  # the shipped lists: the config's own check
    assert "allow_val_overlap" in " ".join(response.json()["val_word_list"])
    assert Job.objects.count() == 0


def test_the_seeded_teacher_pool_has_the_training_splits_only():
    seed_word_lists()
    pool = WordList.objects.get(name="dbrl/solved_train")
    splits = set(pool.entries.values_list("split", flat=True))
    assert splits == {"sft", "rl"} and pool.entries.count() == 3953
    assert "derived" in pool.source


def test_a_trained_guesser_samples_as_the_paper_evaluates():
    from webapp.catalog.builders import trained_sampling

    base = ModelSpec(name="b", sampling={"temperature": 1.0, "max_new_tokens": 32})
    assert trained_sampling(base) == {
        "temperature": 0.7,
        "top_p": 0.8,
        "top_k": 20,
        "max_new_tokens": 32,
    }
    assert trained_sampling(base, "judge") == base.sampling
    assert trained_sampling(None)["temperature"] == 0.7
