"""Training job kinds (knowledge, sft, dpo) through the jobs system: references checked before
queueing, checkpoints registered as playable model specs, chaining runs, stop and resume."""

from __future__ import annotations

from unittest import mock

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError

from games.rollout import rollout
from games.types import GameConfig, Verdict
from tests.sending import tasks_held
from tests.training.sft.helpers import tiny_model, trajectory
from webapp.catalog.builders import guesser_for, judge_for
from webapp.catalog.models import ModelKind, ModelSpec, Split
from webapp.catalog.services import SeedEntry, seed_model_specs, word_list_create
from webapp.jobs.models import Checkpoint, Job, JobStatus, Metric
from webapp.jobs.services import job_resume, job_run, job_submit

pytestmark = pytest.mark.django_db
FAST = dict(
    max_steps=2, learning_rate=5e-3, warmup_ratio=0.0, global_batch_size=8, per_device_batch_size=8
)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    return tiny_model(tmp_path_factory)


@pytest.fixture(autouse=True)
def no_heartbeats(settings):
    settings.JOB_HEARTBEAT_SECONDS = 3600  # the beat thread may not use the test database


@pytest.fixture
def seeded(tiny_dir):
    seed_model_specs(tiny_dir)
    word_list_create(
        name="t/words",
        entries=[
            SeedEntry("dog", split=Split.SFT),
            SeedEntry("apple", split=Split.SFT),
            SeedEntry("car", split=Split.RL),
        ],
    )
    word_list_create(
        name="t/pool", entries=[SeedEntry(w) for w in ("dog", "cat", "apple", "pear", "car", "bus")]
    )


def submit(kind: str, **params) -> Job:
    with tasks_held():
        return job_submit(kind=kind, params=params)


def play(spec: ModelSpec, secret: str = "dog"):
    (game,) = rollout(
        guesser_for(spec),
        judge_for(ModelSpec.objects.get(name="kb")),
        [secret],
        config=GameConfig(max_turns=3),
    )
    return game


def test_sft_job_stops_resumes_and_registers_playable_model_specs(seeded):
    job = submit(
        "sft", word_list="t/words", split="sft", pool_word_list="t/pool", **{**FAST, "max_steps": 3}
    )
    assert job.queue == settings.JOBS_GPU_QUEUE
    calls = {"n": 0}

    def stop_in_step_two(self):
        calls["n"] += 1  # call 1: before the teacher's games; then once per training step
        if calls["n"] >= 3:
            Job.objects.filter(pk=self.job_id).update(status=JobStatus.STOPPING)  # as a cancel does
            return True
        return False

    with mock.patch("webapp.jobs.reporter.DatabaseReporter.should_stop", stop_in_step_two):
        assert job_run(job_id=job.pk) == JobStatus.STOPPED
    assert list(Checkpoint.objects.filter(job=job).values_list("step", flat=True)) == [2]
    with tasks_held():
        job_resume(job=Job.objects.get(pk=job.pk))
    assert job_run(job_id=job.pk) == JobStatus.FINISHED
    job.refresh_from_db()
    assert job.result["global_step"] == 3 and job.result["words"] == 2  # the sft split only
    assert list(
        Checkpoint.objects.filter(job=job).order_by("step").values_list("step", flat=True)
    ) == [2, 3]
    assert job.logs.filter(message__startswith="resuming from").exists()
    assert set(Metric.objects.filter(job=job, name="loss").values_list("step", flat=True)) == {
        1,
        2,
        3,
    }
    assert job.artifacts.filter(kind="sft-examples").exists()
    assert ModelSpec.objects.filter(produced_by=job).count() == 2  # each checkpoint is playable
    spec = ModelSpec.objects.get(name=job.result["model_spec"])
    final = Checkpoint.objects.get(job=job, step=3)
    assert (spec.kind, spec.role, spec.parent.name) == (
        ModelKind.TRANSFORMERS,
        "guesser",
        "tiny-llama",
    )
    assert spec.path == final.path and not spec.adapter_path and final.model_spec == spec
    assert final.config["config"]["learning_rate"] == 5e-3
    game = play(spec)
    assert game.guesser == spec.name and 1 <= game.n_turns <= 3


def test_lora_knowledge_job_then_dpo_from_it_on_stored_games(seeded, tiny_dir):
    from webapp.play.records import trajectories_store

    knowledge = submit(
        "knowledge", word_list="t/pool", lora=True, lora_rank=4, sequences_per_word=2, **FAST
    )
    assert job_run(job_id=knowledge.pk) == JobStatus.FINISHED
    knowledge.refresh_from_db()
    adapter_spec = ModelSpec.objects.get(name=knowledge.result["model_spec"])
    assert adapter_spec.path == str(tiny_dir) and adapter_spec.adapter_path.endswith("checkpoint-2")
    assert (
        adapter_spec.parent.name == "tiny-llama"
        and Checkpoint.objects.get(job=knowledge).is_adapter
    )

    infogain, kb = ModelSpec.objects.get(name="infogain"), ModelSpec.objects.get(name="kb")
    games = [
        trajectory(
            "dog",
            [
                ("Is it a kind of animal?", Verdict.YES),
                ("Is it a kind of pet?", Verdict.NO),
                ("Is it a dog?", Verdict.FINISHED),
            ],
        ),
        trajectory(
            "car", [("Is it a kind of animal?", Verdict.NO), ("Is it a car?", Verdict.FINISHED)]
        ),
    ]
    trajectories_store(games, guesser=infogain, judge=kb)
    dpo = submit(
        "dpo",
        base_model=adapter_spec.name,
        source="games",
        games_guesser="infogain",
        word_list="",
        pool_word_list="t/pool",
        reward="belief",
        min_reward_gap=0.0,
        candidates=2,
        prefixes_per_game=0,
        max_new_tokens=8,
        lora_rank=4,
        **{**FAST, "global_batch_size": 4, "per_device_batch_size": 4},
    )
    assert job_run(job_id=dpo.pk) == JobStatus.FINISHED
    dpo.refresh_from_db()
    assert dpo.result["pairs"] >= 4 and dpo.result["base_model"] == adapter_spec.name
    spec = ModelSpec.objects.get(name=dpo.result["model_spec"])
    # the knowledge adapter was merged into a new base; the DPO adapter goes on top of it
    assert spec.parent == adapter_spec and spec.path.endswith("base-merged") and spec.adapter_path
    assert Metric.objects.filter(job=dpo, name="rewards/margins").count() == 2
    assert play(spec).n_turns >= 1


def test_judge_sft_job_registers_a_judge(seeded):
    job = submit(
        "judge_sft",
        word_list="t/words",
        pool_word_list="t/pool",
        cross_questions=2,
        **{**FAST, "max_steps": 1},
    )
    assert job_run(job_id=job.pk) == JobStatus.FINISHED
    job.refresh_from_db()
    spec = ModelSpec.objects.get(name=job.result["model_spec"])
    assert spec.role == "judge" and spec.can_judge and not spec.can_guess
    assert (
        job.result["verdicts"]["finished"] == 3 and job.result["verdicts"]["no"] > 0
    )  # a won game per word
    answer = judge_for(spec).judge("dog", "Is it a kind of animal?")
    assert answer.verdict in set(Verdict) and isinstance(answer.raw, str)


@pytest.mark.parametrize(
    "kind,field,value",
    [
        ("sft", "base_model", "nobody"),
        ("sft", "base_model", "infogain"),
        ("sft", "teacher", "kb"),
        ("sft", "judge", "infogain"),
        ("sft", "word_list", "nope"),
        ("sft", "split", "val"),
        ("sft", "pool_word_list", "nope"),
        ("dpo", "source", "games"),
        ("knowledge", "word_list", "nope"),
        ("sft", "max_steps", -1),
        ("dpo", "reward", "vibes"),
    ],
)
def test_bad_references_are_refused_before_queueing(seeded, kind, field, value):
    params = {"word_list": "t/words"} if kind != "knowledge" else {"word_list": "t/pool"}
    params[field] = value
    if field == "source":
        params["games_guesser"] = "infogain"  # no stored game of it
    with pytest.raises(ValidationError) as err:
        submit(kind, **params)
    assert field in err.value.message_dict
    assert Job.objects.count() == 0


def test_launch_forms_document_every_field():
    from webapp.jobs.forms import config_form_class
    from webapp.jobs.registry import REGISTRY, build_config

    for kind in ("knowledge", "sft", "dpo"):
        form = config_form_class(REGISTRY[kind])()
        assert all(f.help_text for f in form.fields.values()), kind
        assert REGISTRY[kind].gpu
    config = build_config(
        REGISTRY["sft"], {"max_steps": "2", "lora": "true", "learning_rate": "1e-4"}
    )
    assert (config.max_steps, config.lora, config.learning_rate) == (2, True, 1e-4)


# -- dpo's rating judge (reward=rating): a model-spec name like base_model and judge ---------------
DPO = dict(word_list="t/words", pool_word_list="t/pool")


@pytest.fixture
def raters(seeded):
    ModelSpec.objects.create(
        name="rater-hf", kind=ModelKind.TRANSFORMERS, role="judge", path="/models/rater"
    )
    ModelSpec.objects.create(
        name="rater-api",
        kind=ModelKind.OPENAI,
        role="judge",
        endpoint="http://127.0.0.1:9/v1",
        remote_model="rater",
    )
    ModelSpec.objects.create(
        name="rater-lora",
        kind=ModelKind.TRANSFORMERS,
        role="judge",
        path="/models/rater",
        adapter_path="/models/rater-lora",
    )
    ModelSpec.objects.create(
        name="rater-retired",
        kind=ModelKind.TRANSFORMERS,
        role="judge",
        path="/models/rater",
        is_active=False,
    )


def run_recording_runner(job: Job) -> dict:
    """Run the job with the DPO trainer replaced by a stub; what the stub received."""
    seen: dict = {}

    def stub(config, reporter, *, model_path, **inputs):
        seen.update(config=config, model_path=model_path, inputs=inputs)
        return {
            "final_checkpoint": f"{reporter.output_dir}/checkpoint-1",
            "global_step": 1,
            "is_adapter": False,
        }

    with mock.patch("training.dpo.trainer.run", stub):
        assert job_run(job_id=job.pk) == JobStatus.FINISHED, Job.objects.get(pk=job.pk).error
    return seen


@pytest.mark.parametrize("name", ["nobody", "kb", "infogain", "rater-retired", "hf:/models/rater"])
def test_dpo_rating_model_not_an_active_llm_spec_is_refused_before_queueing(raters, name):
    with pytest.raises(ValidationError) as err:
        submit("dpo", **DPO, reward="rating", rating_model=name)
    assert err.value.message_dict["rating_model"] == [
        f"no active transformers, vLLM or OpenAI-compatible model spec named {name!r}"
    ]
    assert Job.objects.count() == 0


def test_dpo_reward_rating_without_rating_model_is_refused_on_the_field(raters):
    with pytest.raises(ValidationError) as err:
        submit("dpo", **DPO, reward="rating")
    assert set(err.value.message_dict) == {"rating_model"}
    assert (
        "reward=rating needs the model spec of the rating judge"
        in err.value.message_dict["rating_model"][0]
    )
    assert Job.objects.count() == 0


@pytest.mark.parametrize(
    "name,expected",
    [
        ("rater-hf", "hf:/models/rater"),
        ("rater-api", "openai:http://127.0.0.1:9/v1#rater"),
        (
            "tiny-llama",
            "hf:{tiny_dir}",
        ),  # the base model itself: its folder, so the trainer reuses the policy
    ],
)
def test_dpo_rating_model_name_is_resolved_to_its_spec_for_the_trainer(
    raters, tiny_dir, name, expected
):
    from training.dpo.config import DPOJobConfig

    job = submit("dpo", **DPO, reward="rating", rating_model=name)
    assert job.config["rating_model"] == name  # the job keeps the name
    seen = run_recording_runner(job)
    config = seen["config"]
    assert type(config) is DPOJobConfig  # the trainer's own config, checked with the spec string
    assert config.rating_model == expected.format(tiny_dir=tiny_dir)
    assert (config.reward, config.base_model, seen["model_path"]) == (
        "rating",
        "tiny-llama",
        str(tiny_dir),
    )


def test_dpo_rating_model_with_an_adapter_is_merged_once_like_the_base(raters):
    job = submit("dpo", **DPO, reward="rating", rating_model="rater-lora")
    merged = f"{settings.CHECKPOINTS_DIR}/job-{job.pk}/rating-merged"
    with mock.patch("training.common.models.merge_adapter", return_value=merged) as merge:
        seen = run_recording_runner(job)
    merge.assert_called_once_with("/models/rater", "/models/rater-lora", mock.ANY)
    assert str(merge.call_args.args[2]) == merged
    assert seen["config"].rating_model == f"hf:{merged}"


def test_dpo_rating_model_is_unused_without_reward_rating(raters):
    job = submit("dpo", **DPO, reward="infogain", rating_model="rater-hf")
    assert run_recording_runner(job)["config"].rating_model == ""
