"""Model specs built for jobs take the job's precision where they run a model; a person's game
asks for one-row decoding, which keeps a local model in float32 on a CPU."""

from __future__ import annotations

import pytest

from webapp.catalog import shipped
from webapp.catalog.builders import guesser_for, judge_for
from webapp.catalog.models import ModelSpec
from webapp.catalog.services import seed_model_specs

pytestmark = pytest.mark.django_db


def test_jobs_pass_their_precision_and_a_persons_game_decodes_one_row(monkeypatch):
    monkeypatch.setenv("TWENTYQ_CPU_BF16", "1")  # a CPU with bf16 units
    seed_model_specs()
    shipped.seed_pool_word_list()
    shipped.seed_guesser_specs()
    spec = ModelSpec.objects.get(name="tiny-20q-sft")  # a local transformers model
    assert guesser_for(spec, precision="float32").backend.precision == "float32"
    assert guesser_for(spec, precision="auto").backend.precision == "bfloat16"
    assert guesser_for(spec, one_row=True).backend.precision == "float32"
    # the knowledge-base judge runs no model: the job's precision is not passed to it
    kb = judge_for(ModelSpec.objects.get(name="kb"), precision="bfloat16")
    assert kb.judge("dog", "Is it an animal?").verdict.value == "yes"
