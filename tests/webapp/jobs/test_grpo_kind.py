"""The grpo job kind through the jobs system: references checked before queueing, metrics and
warnings stored, checkpoints registered as playable LoRA model specs, stop and resume."""

from __future__ import annotations

from unittest import mock

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError

from games.rollout import rollout
from games.types import GameConfig
from tests.sending import tasks_held
from webapp.catalog.builders import guesser_for, judge_for
from webapp.catalog.models import ModelKind, ModelSpec, Split
from webapp.catalog.services import SeedEntry, seed_model_specs, word_list_create
from webapp.jobs.models import Checkpoint, Job, JobStatus, Metric
from webapp.jobs.services import job_resume, job_run, job_submit

pytestmark = pytest.mark.django_db
FAST = dict(
    steps=2,
    secrets_per_step=1,
    num_generations=2,
    max_turns=2,
    max_completion_length=6,
    learning_rate=3e-3,
    save_steps=1,
    rollout_filter_ratio=1.0,
    val_secrets=0,
    cpu_threads=1,
)


@pytest.fixture(scope="session")
def grpo_web_tiny(tmp_path_factory):
    from training.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("grpo-web") / "tiny", hidden=32, intermediate=64, seed=0
    )


@pytest.fixture(autouse=True)
def no_heartbeats(settings):
    settings.JOB_HEARTBEAT_SECONDS = 3600  # the beat thread may not use the test database


@pytest.fixture
def seeded(grpo_web_tiny):
    seed_model_specs(grpo_web_tiny)
    word_list_create(
        name="g/words",
        entries=[
            SeedEntry("dog", split=Split.RL),
            SeedEntry("apple", split=Split.RL),
            SeedEntry("car", split=Split.TEST),
        ],
    )


def submit(**params) -> Job:
    with tasks_held():
        return job_submit(kind="grpo", params=params)


def test_grpo_job_stops_resumes_and_registers_adapter_model_specs(seeded, grpo_web_tiny):
    job = submit(
        word_list="g/words",
        split="rl",
        val_word_list="g/words",
        val_split="test",
        **{**FAST, "val_secrets": 1},
    )
    assert job.queue == settings.JOBS_GPU_QUEUE
    calls = {"n": 0}

    def stop_before_step_two(self):
        calls["n"] += 1  # once before each step
        if calls["n"] >= 2:
            Job.objects.filter(pk=self.job_id).update(status=JobStatus.STOPPING)
            return True
        return False

    with mock.patch("webapp.jobs.reporter.DatabaseReporter.should_stop", stop_before_step_two):
        assert job_run(job_id=job.pk) == JobStatus.STOPPED
    assert list(Checkpoint.objects.filter(job=job).values_list("step", flat=True)) == [1]
    with tasks_held():
        job_resume(job=Job.objects.get(pk=job.pk))
    assert job_run(job_id=job.pk) == JobStatus.FINISHED
    job.refresh_from_db()
    assert job.result["global_step"] == 2 and job.result["resumed_from"] == 1
    assert set(Metric.objects.filter(job=job, name="reward").values_list("step", flat=True)) == {
        1,
        2,
    }
    for name in (
        "reward_std",
        "frac_reward_zero_std",
        "entropy",
        "clip_ratio/low_mean",
        "grad_norm",
        "warning/grad_norm_spike",
    ):
        assert Metric.objects.filter(job=job, name=name).exists(), name
    assert job.logs.filter(message__startswith="resuming from").exists()
    # validated on the test split's word before step 1 and after the last; the resumed attempt
    # kept the baseline
    assert set(
        Metric.objects.filter(job=job, name="val/success_rate").values_list("step", flat=True)
    ) == {0, 2}
    assert (
        job.logs.filter(message__startswith="validation on 1 secrets before training").count() == 1
    )
    assert job.result["validation"]["secrets"] == 1
    spec = ModelSpec.objects.get(name=job.result["model_spec"])
    final = Checkpoint.objects.get(job=job, step=2)
    assert final.is_adapter and final.model_spec == spec
    assert (spec.kind, spec.path, spec.adapter_path) == (
        ModelKind.TRANSFORMERS,
        str(grpo_web_tiny),
        final.path,
    )
    assert final.config["config"]["advantage"] == "turn"
    (game,) = rollout(
        guesser_for(spec),
        judge_for(ModelSpec.objects.get(name="kb")),
        ["car"],
        config=GameConfig(max_turns=2),
    )
    assert game.guesser == spec.name and game.n_turns >= 1


@pytest.mark.parametrize(
    "field,value",
    [
        ("base_model", "nobody"),
        ("base_model", "infogain"),
        ("judge", "infogain"),
        ("word_list", "nope"),
        ("split", "val"),
        ("advantage", "token"),
        ("num_generations", 1),
        ("val_word_list", "nope"),
    ],
)
def test_bad_references_and_values_are_refused_before_queueing(seeded, field, value):
    with pytest.raises(ValidationError) as err:
        submit(**{"word_list": "g/words", field: value})
    assert field in err.value.message_dict
    assert Job.objects.count() == 0


def test_a_validation_split_without_words_is_refused_before_queueing(seeded):
    with pytest.raises(ValidationError) as err:
        submit(word_list="g/words", val_secrets=2, val_word_list="g/words", val_split="val")
    assert "val_split" in err.value.message_dict and Job.objects.count() == 0


def test_launch_form_documents_every_field():
    from webapp.jobs.forms import config_form_class
    from webapp.jobs.registry import REGISTRY

    form = config_form_class(REGISTRY["grpo"])()
    assert all(f.help_text for f in form.fields.values())
    assert REGISTRY["grpo"].gpu


def test_the_information_gain_pool_is_checked_and_passed_to_the_runner(seeded):
    with pytest.raises(ValidationError) as err:
        submit(word_list="g/words", infogain_coef=0.5, pool_word_list="nope")
    assert "pool_word_list" in err.value.message_dict and Job.objects.count() == 0
    with pytest.raises(ValidationError) as err:
        # a pool for neither the reward (off) nor the belief diagnostic (off)
        submit(word_list="g/words", pool_word_list="g/words", belief_diagnostic=False)
    assert Job.objects.count() == 0

    from training.grpo.config import GRPOConfig
    from webapp.jobs.kinds import grpo as grpo_kind

    config = GRPOConfig(
        word_list="g/words", split="rl", infogain_coef=0.5, pool_word_list="g/words", **FAST
    )
    with mock.patch.object(grpo_kind, "_run") as runner:
        grpo_kind.run(config, reporter=None)
    kwargs = runner.call_args.kwargs
    assert kwargs["pool"] == ["dog", "apple", "car"] and kwargs["words"] == ["dog", "apple"]
