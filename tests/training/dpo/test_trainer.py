"""DPO on the tiny model: LoRA trains only adapter weights, TRL's reward metrics are reported,
and the whole run (sampling, rewards, pairs, training) works from the teacher's games."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import torch

from games.llm.chat import GuesserFormat
from training.common.models import DeviceSetup, load_model
from training.dpo.config import DPOJobConfig
from training.reporting import ConsoleReporter

CPU = DeviceSetup("cpu", "float32")


def config(**overrides) -> DPOJobConfig:
    base = dict(
        base_model="unused",
        learning_rate=1e-2,
        warmup_ratio=0.0,
        lr_scheduler="constant",
        global_batch_size=4,
        per_device_batch_size=4,
        max_steps=2,
        lora_rank=4,
        lora_alpha=8,
    )
    return DPOJobConfig(**{**base, **overrides})


def handmade_pairs() -> list[dict]:
    prompt = GuesserFormat().messages([])
    return [
        {
            "prompt": prompt,
            "chosen": [{"role": "assistant", "content": good}],
            "rejected": [{"role": "assistant", "content": bad}],
        }
        for good, bad in [
            ("Is it an animal?", "animal animal"),
            ("Is it a tool?", "no"),
            ("Is it a place?", "place!!"),
            ("Is it food?", "food food food"),
        ]
    ]


def test_config_validation():
    assert DPOJobConfig().lora and DPOJobConfig().reward == "infogain"
    for field, value in [
        ("candidates", 1),
        ("reward", "vibes"),
        ("min_reward_gap", -1.0),
        ("beta", 0.0),
        ("loss_type", "kto"),
        ("temperature", 0.0),
    ]:
        with pytest.raises(ValueError, match=f"^{field}"):
            DPOJobConfig(**{field: value})


def test_lora_dpo_changes_only_adapter_weights_and_logs_reward_metrics(tiny_dir, tmp_path):
    from training.dpo.trainer import build_dpo_trainer

    model, tok = load_model(str(tiny_dir))
    original = {k: v.clone() for k, v in model.state_dict().items()}
    trainer = build_dpo_trainer(
        config(), model, tok, handmade_pairs(), output_dir=tmp_path, setup=CPU
    )
    trainer.train()
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logged) == 2
    for key in (
        "rewards/chosen",
        "rewards/rejected",
        "rewards/margins",
        "rewards/accuracies",
        "logps/chosen",
    ):
        assert key in logged[-1]
    assert logged[-1]["rewards/margins"] > 0 and logged[-1]["loss"] < logged[0]["loss"]
    base = trainer.model.get_base_model().state_dict()
    lora = {k: v for k, v in base.items() if "lora_" in k}
    assert lora and any(
        v.abs().sum() > 0 for k, v in lora.items() if "lora_B" in k
    )  # B starts at zero
    for name, value in base.items():
        if "lora_" not in name:
            assert torch.equal(value, original[name.replace(".base_layer", "")]), name


def test_full_dpo_uses_a_frozen_copy_as_reference(tiny_dir, tmp_path):
    from training.dpo.trainer import build_dpo_trainer

    model, tok = load_model(str(tiny_dir))
    trainer = build_dpo_trainer(
        config(lora=False, max_steps=1),
        model,
        tok,
        handmade_pairs(),
        output_dir=tmp_path,
        setup=CPU,
    )
    reference = {k: v.clone() for k, v in trainer.ref_model.state_dict().items()}
    trainer.train()
    assert all(torch.equal(v, reference[k]) for k, v in trainer.ref_model.state_dict().items())
    assert any(not torch.equal(v, reference[k]) for k, v in trainer.model.state_dict().items())


def test_run_from_teacher_games(tiny_dir, tmp_path):
    from training.dpo.trainer import PAIRS_FILE, run

    reporter = ConsoleReporter(tmp_path, stream=io.StringIO())
    # an untrained model writes gibberish, so every candidate is invalid: ΔBelief still ranks them
    c = config(
        reward="belief", min_reward_gap=0.0, candidates=3, prefixes_per_game=2, max_new_tokens=8
    )
    result = run(
        c,
        reporter,
        model_path=str(tiny_dir),
        words=["dog", "car"],
        pool=["dog", "cat", "car", "bus"],
    )
    pairs = [json.loads(line) for line in (tmp_path / PAIRS_FILE).read_text().splitlines()]
    assert (
        result["pairs"] == len(pairs) >= 2 and result["global_step"] == 2 and result["is_adapter"]
    )
    assert all(p["chosen_reward"] > p["rejected_reward"] for p in pairs)
    assert all(p["prompt"][0]["role"] == "system" and p["chosen"] != p["rejected"] for p in pairs)
    metrics = [r for r in reporter.records if r["event"] == "metrics"]
    assert metrics[0]["step"] == 0 and "candidates/reward_mean" in metrics[0]
    assert {"rewards/chosen", "rewards/margins", "tokens_per_second"} <= set(metrics[1])
    folder = Path(result["final_checkpoint"])
    assert (folder / "adapter_config.json").is_file() and (
        folder / "training_config.json"
    ).is_file()
    # the adapter loads onto the base and plays
    from games.guessers.llm import LLMGuesser
    from games.llm.transformers_backend import TransformersBackend

    guesser = LLMGuesser(TransformersBackend(str(tiny_dir), adapter=str(folder)))
    assert isinstance(guesser.ask(guesser.start(seed=0)).question, str)
    assert result["parameters_trained"] < 30_000
