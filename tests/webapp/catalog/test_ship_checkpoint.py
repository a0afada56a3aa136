"""`manage.py ship_guesser` (issue 44): a training job's checkpoint on a pretrained base and the
evaluation job that measured it become a shipped guesser (adapter in float16, guesser.json, card,
the job's games as a snapshot) that the seed registers and whose games it imports."""

from __future__ import annotations

import json

import pytest
import torch
from django.core.management import CommandError, call_command
from safetensors.torch import load_file, save_file

from tests.sending import tasks_held
from training import shipping
from webapp.catalog import shipped
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.jobs.models import Checkpoint, Job, JobStatus
from webapp.jobs.services import job_run, job_submit
from webapp.play.models import Game

pytestmark = pytest.mark.django_db

RUN_CONFIG = {
    "kind": "sft",
    "config": {
        "source": "reference",
        "max_turn_examples": 4000,
        "epochs": 1.0,
        "learning_rate": 2e-4,
        "global_batch_size": 16,
        "lora_rank": 16,
        "lora_alpha": 32,
        "lora_dropout": 0.0,
        "seed": 0,
        "guesser_prompt": "paper",
    },
    "resolved": {"examples": 4000, "precision": "bfloat16"},
    "code": {"commit": "a" * 40, "dirty": False},
    "step": 250,
}


LATENCY = {
    "precision": "bfloat16",
    "p50_s": 0.31,
    "p95_s": 0.52,
    "threads": 2,
    "questions": 60,
    "command": "python -m bench.guesser_latency --guesser x=y",
    "variants": {
        "bfloat16": {"precision": "bfloat16", "p50_s": 0.31, "p95_s": 0.52, "questions": 60},
        "float32": {"precision": "float32", "p50_s": 0.27, "p95_s": 0.4, "questions": 60},
    },
}


@pytest.fixture
def checkpoint(tmp_path):
    """A finished sft job's checkpoint registered as a spec on the SmolLM2 base, and a finished
    evaluation job of it (played here by the information-gain guesser, then relabelled)."""
    seed_word_lists()
    seed_model_specs()
    folder = tmp_path / "checkpoint-250"
    folder.mkdir()
    weights = {"base_model.layers.0.q_proj.lora_A.weight": torch.randn(16, 64)}
    save_file(weights, str(folder / "adapter_model.safetensors"))
    (folder / "adapter_config.json").write_text(
        json.dumps({"r": 16, "base_model_name_or_path": "/x"})
    )
    (folder / "training_config.json").write_text(json.dumps(RUN_CONFIG))
    train = Job.objects.create(kind="sft", config=RUN_CONFIG["config"], status=JobStatus.FINISHED)
    spec = ModelSpec.objects.create(
        name=f"sft-job{train.pk}-step250",
        kind=ModelKind.TRANSFORMERS,
        role=ModelRole.GUESSER,
        path="smollm2-135m-instruct",
        adapter_path=str(folder),
        produced_by=train,
    )
    Checkpoint.objects.create(
        job=train, step=250, path=str(folder), is_adapter=True, model_spec=spec
    )
    with tasks_held():
        evaluation = job_submit(
            kind="evaluation",
            params=dict(guesser="infogain", judge="kb", limit=3, samples=2, max_turns=8),
        )
    assert job_run(job_id=evaluation.pk) == JobStatus.FINISHED
    evaluation.refresh_from_db()
    Job.objects.filter(pk=evaluation.pk).update(
        config={**evaluation.config, "guesser": spec.name, "sampling": "paper"},
        result={
            **evaluation.result,
            "sampling": {"name": "paper", "temperature": 0.7, "top_p": 0.8, "top_k": 20}
            | {"max_new_tokens": 32, "seed": None, "stop": []},
        },
    )
    return spec, evaluation


def test_a_checkpoint_ships_as_a_guesser_the_seed_registers_with_its_games(checkpoint, tmp_path):
    spec, evaluation = checkpoint
    models, evaluations = tmp_path / "models", tmp_path / "models" / "evaluation"
    settings = shipping_call(spec, evaluation, models, evaluations)
    out = models / "smollm2-20q-sft"
    weights = load_file(str(out / "adapter_model.safetensors"))
    assert {v.dtype for v in weights.values()} == {torch.float16}
    adapter_config = json.loads((out / "adapter_config.json").read_text())
    assert adapter_config["base_model_name_or_path"] == "smollm2-135m-instruct"  # by name
    assert json.loads((out / "training_config.json").read_text()) == RUN_CONFIG
    assert (
        settings["precision"] == "bfloat16" and settings["provenance"]["bench_commit"] == "a" * 40
    )
    assert settings["sampling"] == {
        "temperature": 0.7,
        "top_p": 0.8,
        "top_k": 20,
        "max_new_tokens": 32,
    }
    cli = settings["results"]["cli"]
    result = Job.objects.get(pk=evaluation.pk).result
    assert cli["success_rate"] == result["success_rate"] and cli["n_games"] == 6
    assert cli["valid_questions"] == pytest.approx(
        1 - result["invalid_rate"] - result["repeated_rate"], abs=1e-4
    )
    card = (out / "MODEL_CARD.md").read_text()
    assert "4,000 of the ΔBelief-RL paper's 48,335 SFT turns" in card and "bfloat16" in card
    assert "0.31 s (median) / 0.52 s (p95) after an answer, one game at a time at bfloat16" in card
    assert "0.27 s (median) / 0.4 s (p95) after an answer, one game at a time at float32" in card
    assert f"Evaluation job {evaluation.pk}" in card and "T 0.7, top-p 0.8, top-k 20" in card

    index = json.loads((evaluations / "evaluation.json").read_text())["guessers"]["smollm2-20q-sft"]
    assert index["digest"] == shipping.digest(evaluations / index["file"])
    games = shipped.read_snapshot(evaluations / index["file"])
    assert len(games) == 6 and {g.guesser for g in games} == {"smollm2-20q-sft"}
    stored = {(g.secret, g.outcome, g.turns.count()) for g in Game.objects.filter(job=evaluation)}
    assert {(g.secret, g.outcome.value, len(g.turns)) for g in games} == stored

    assert shipped.seed_guesser_specs(models) == ["smollm2-20q-sft"]
    new = ModelSpec.objects.get(name="smollm2-20q-sft")
    assert new.path == "smollm2-135m-instruct" and new.adapter_path == str(out)
    assert shipped.import_evaluation("smollm2-20q-sft", index, evaluations)
    imported = Job.objects.get(config__guesser="smollm2-20q-sft")
    assert imported.config["sampling"] == "paper"
    assert Game.objects.filter(job=imported).count() == 6
    # the same games give the same digest: a re-ship imports nothing twice
    shipping_call(spec, evaluation, models, evaluations)
    again = json.loads((evaluations / "evaluation.json").read_text())["guessers"]["smollm2-20q-sft"]
    assert again["digest"] == index["digest"]
    assert not shipped.import_evaluation("smollm2-20q-sft", again, evaluations)


def shipping_call(spec, evaluation, models, evaluations):
    from webapp.catalog.shipping import ship_checkpoint_guesser

    return ship_checkpoint_guesser(
        name="smollm2-20q-sft",
        checkpoint_spec=spec.name,
        evaluation_job=evaluation.pk,
        validation_jobs=(evaluation.pk,),
        latency=LATENCY,
        models_dir=models,
        evaluation_dir=evaluations,
    )


def test_the_command_refuses_what_is_not_a_shippable_checkpoint(checkpoint, tmp_path):
    spec, evaluation = checkpoint
    with pytest.raises(CommandError, match="no model spec named 'nope'"):
        call_command("ship_guesser", "x", "--checkpoint", "nope", "--evaluation", evaluation.pk)
    with pytest.raises(CommandError, match="not a LoRA adapter on a pretrained base"):
        call_command("ship_guesser", "x", "--checkpoint", "kb", "--evaluation", evaluation.pk)
    other = Job.objects.create(kind="evaluation", config={"guesser": "kb"}, status="finished")
    with pytest.raises(CommandError, match="played 'kb'"):
        call_command("ship_guesser", "x", "--checkpoint", spec.name, "--evaluation", other.pk)
    running = Job.objects.create(kind="evaluation", config={}, status=JobStatus.RUNNING)
    with pytest.raises(CommandError, match="is running, not finished"):
        call_command("ship_guesser", "x", "--checkpoint", spec.name, "--evaluation", running.pk)


def test_an_adapter_over_the_shipped_file_limit_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    save_file({"w": torch.zeros(256, 256)}, str(folder / "adapter_model.safetensors"))
    (folder / "adapter_config.json").write_text("{}")
    monkeypatch.setattr(shipping, "MAX_SHIPPED_BYTES", 64 * 1024)
    with pytest.raises(shipping.ShippingError, match="over the 0.0625 MB"):
        shipping.save_adapter_fp16(folder, tmp_path / "out", "smollm2-135m-instruct")
    assert not (tmp_path / "out" / "adapter_model.safetensors").exists()
    with pytest.raises(shipping.ShippingError, match="holds no LoRA adapter"):
        shipping.save_adapter_fp16(tmp_path, tmp_path / "out", "smollm2-135m-instruct")


def test_a_checkpoint_exports_as_a_stage_a_fresh_machine_resumes_from(checkpoint, tmp_path):
    spec, _ = checkpoint
    train = spec.produced_by
    from webapp.jobs.models import Metric

    Metric.objects.create(job=train, step=1, name="loss", value=1.25)
    Metric.objects.create(job=train, step=2, name="loss", value=0.75)
    call_command("export_checkpoint", spec.name, str(tmp_path / "stage"))
    stage = json.loads((tmp_path / "stage" / "stage.json").read_text())
    assert stage["step"] == 250 and stage["base"] == "smollm2-135m-instruct"
    assert stage["job"]["id"] == train.pk and stage["job"]["loss"] == [[1, 1.25], [2, 0.75]]
    weights = load_file(str(tmp_path / "stage" / "adapter_model.safetensors"))
    assert {v.dtype for v in weights.values()} == {torch.float16}
    assert json.loads((tmp_path / "stage" / "training_config.json").read_text()) == RUN_CONFIG
    with pytest.raises(CommandError, match="not a LoRA checkpoint"):
        call_command("export_checkpoint", "kb", str(tmp_path / "x"))
    # a fresh machine: the spec is gone, the committed folder registers it again
    Checkpoint.objects.all().delete()
    ModelSpec.objects.filter(name=spec.name).delete()
    call_command("import_checkpoint", str(tmp_path / "stage"))
    again = ModelSpec.objects.get(name=spec.name)
    assert again.path == "smollm2-135m-instruct" and not again.published
    assert again.adapter_path == str((tmp_path / "stage").resolve())
    assert again.parent.name == "smollm2-135m-instruct"
    with pytest.raises(CommandError, match="is not an exported stage"):
        call_command("import_checkpoint", str(tmp_path))


def _adapter(folder, rank, alpha, seed):
    generator = torch.Generator().manual_seed(seed)
    folder.mkdir()
    weights = {
        "base_model.model.layers.0.q_proj.lora_A.weight": torch.randn(
            rank, 64, generator=generator
        ),
        "base_model.model.layers.0.q_proj.lora_B.weight": torch.randn(
            64, rank, generator=generator
        ),
    }
    save_file(weights, str(folder / "adapter_model.safetensors"))
    (folder / "adapter_config.json").write_text(
        json.dumps({"r": rank, "lora_alpha": alpha, "base_model_name_or_path": "/x"})
    )
    return weights


def test_a_stage_on_an_earlier_stage_exports_as_one_adapter_on_the_base(tmp_path):
    """An sft job whose base_model was an earlier stage trains on that stage merged into the
    base; its export stacks both adapters into one on the pretrained base (exact: see
    tests/training/test_stack_adapters.py), so a fresh machine imports it like any stage."""
    seed_model_specs()
    first = _adapter(tmp_path / "first", 16, 32, 0)
    second = _adapter(tmp_path / "second", 8, 8, 1)
    earlier = ModelSpec.objects.create(
        name="sft-job1-step375",
        kind=ModelKind.TRANSFORMERS,
        role=ModelRole.GUESSER,
        path="smollm2-135m-instruct",
        adapter_path=str(tmp_path / "first"),
    )
    train = Job.objects.create(kind="sft", config={"base_model": earlier.name})
    spec = ModelSpec.objects.create(
        name=f"sft-job{train.pk}-step300",
        kind=ModelKind.TRANSFORMERS,
        role=ModelRole.GUESSER,
        path=str(tmp_path / "base-merged"),
        adapter_path=str(tmp_path / "second"),
        parent=earlier,
        produced_by=train,
    )
    Checkpoint.objects.create(
        job=train, step=300, path=str(tmp_path / "second"), is_adapter=True, model_spec=spec
    )
    call_command("export_checkpoint", spec.name, str(tmp_path / "stage"))
    stage = json.loads((tmp_path / "stage" / "stage.json").read_text())
    assert stage["base"] == "smollm2-135m-instruct" and stage["stacked_on"] == earlier.name
    config = json.loads((tmp_path / "stage" / "adapter_config.json").read_text())
    assert config["r"] == config["lora_alpha"] == 24
    assert config["base_model_name_or_path"] == "smollm2-135m-instruct"
    weights = load_file(str(tmp_path / "stage" / "adapter_model.safetensors"))
    a, b = (weights[f"base_model.model.layers.0.q_proj.lora_{x}.weight"].float() for x in "AB")
    key = "base_model.model.layers.0.q_proj.lora_{}.weight"
    delta = 2 * first[key.format("B")] @ first[key.format("A")]
    delta += second[key.format("B")] @ second[key.format("A")]
    assert torch.allclose(b @ a, delta, rtol=1e-2, atol=0.1)  # float16 on disk
    ModelSpec.objects.filter(name=spec.name).delete()
    call_command("import_checkpoint", str(tmp_path / "stage"))
    assert ModelSpec.objects.get(name=spec.name).path == "smollm2-135m-instruct"
