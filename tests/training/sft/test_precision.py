"""Training at the precision `auto` resolves to (issue 43): bf16 on a CPU with bf16 units (frozen
weights in bf16, trained ones and their optimiser state in float32, under autocast), float32 on
one without (TWENTYQ_CPU_BF16 forces either), and the run records what it used."""

from __future__ import annotations

import io
import json
import math

import pytest
import torch

from games.precision import ENV_CPU_BF16
from training.common import trainer as common_trainer
from training.common.models import device_setup
from training.reporting import ConsoleReporter
from training.sft.trainer import train_sft

ROWS = [
    {
        "prompt": [{"role": "user", "content": "Ask." + " Yes." * (2 + 3 * i)}],
        "completion": [{"role": "assistant", "content": "Is it a dog?"}],
    }
    for i in range(8)
]


def test_device_setup_resolves_auto_from_the_cpu_and_keeps_an_asked_precision(monkeypatch):
    monkeypatch.setenv(ENV_CPU_BF16, "0")
    assert device_setup("auto").precision == "float32" and not device_setup().bf16
    assert device_setup("bf16").precision == "bfloat16"
    monkeypatch.setenv(ENV_CPU_BF16, "1")
    assert device_setup("auto").bf16 and device_setup("fp32").precision == "float32"
    with pytest.raises(ValueError, match="unknown precision"):
        device_setup("fp16")


@pytest.mark.parametrize(
    "cpu_bf16,lora,frozen",
    [("0", True, torch.float32), ("1", True, torch.bfloat16), ("1", False, None)],
    ids=["no-bf16-cpu-lora", "bf16-cpu-lora", "bf16-cpu-full"],
)
def test_auto_trains_at_the_cpus_precision_and_records_it(
    tiny_dir, tmp_path, monkeypatch, cpu_bf16, lora, frozen
):
    from training.common.config import TrainConfig

    monkeypatch.setenv(ENV_CPU_BF16, cpu_bf16)
    trainers = []
    real_fit = common_trainer.fit

    def keeping_fit(trainer, callback, resume_from):
        trainers.append(trainer)
        return real_fit(trainer, callback, resume_from)

    monkeypatch.setattr(common_trainer, "fit", keeping_fit)
    config = TrainConfig(
        base_model="unused",
        lora=lora,
        learning_rate=5e-3,
        warmup_ratio=0.0,
        lr_scheduler="constant",
        global_batch_size=4,
        per_device_batch_size=4,
        max_steps=2,
    )
    reporter = ConsoleReporter(tmp_path / "run", stream=io.StringIO())
    result = train_sft(config, reporter, ROWS, kind="sft", model_path=str(tiny_dir))

    used = "bfloat16" if cpu_bf16 == "1" else "float32"
    assert result["precision"] == used and config.precision == "auto"
    saved = json.loads((tmp_path / "run" / "training_config.json").read_text())
    assert saved["config"]["precision"] == "auto" and saved["resolved"]["precision"] == used
    assert math.isfinite(result["first_loss"]) and math.isfinite(result["last_loss"])

    (trainer,) = trainers
    assert trainer.args.bf16 is (used == "bfloat16")  # autocast through accelerate
    params = list(trainer.model.named_parameters())
    trained = [p for _, p in params if p.requires_grad]
    assert trained and all(p.dtype == torch.float32 for p in trained)
    if frozen is not None:
        assert {p.dtype for _, p in params if not p.requires_grad} == {frozen}
    state = [v for s in trainer.optimizer.state.values() for v in s.values() if v.dim()]
    assert state and all(v.dtype == torch.float32 for v in state)
