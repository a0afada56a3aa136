"""The compact LM head on a CPU (training.common.trainer.compact_lm_head_on_cpu): it patches TRL's
private `trl.trainer.utils._use_triton`, so this fails if TRL renames the switch or stops reading
it: with the patch the loss is the same and only the trained positions go through the head."""

from __future__ import annotations

import pytest
import torch

from training.common.config import TrainConfig
from training.common.models import DeviceSetup, load_model
from training.common.trainer import compact_lm_head_on_cpu


@pytest.fixture
def sft_trainer(tiny_dir, tmp_path):
    from training.sft.trainer import build_sft_trainer

    model, tokenizer = load_model(str(tiny_dir))
    rows = [
        {
            "prompt": [{"role": "user", "content": "Ask." + " Yes." * (3 + 5 * i)}],
            "completion": [{"role": "assistant", "content": "Is it a dog?"}],
        }
        for i in range(4)
    ]
    config = TrainConfig(base_model="unused", global_batch_size=4, per_device_batch_size=4)
    return build_sft_trainer(
        config, model, tokenizer, rows, output_dir=tmp_path, setup=DeviceSetup("cpu", "float32")
    )


def test_the_compact_head_scores_only_the_trained_positions_with_the_same_loss(
    sft_trainer, monkeypatch
):
    import trl.trainer.utils as trl_utils

    assert callable(getattr(trl_utils, "_use_triton", None)), "TRL renamed its private switch"
    scored = []
    real = trl_utils._ChunkedLogProbFunction.apply

    def counting(hidden, *args):
        scored.append(hidden.shape[0])
        return real(hidden, *args)

    monkeypatch.setattr(trl_utils._ChunkedLogProbFunction, "apply", counting)
    batch = next(iter(sft_trainer.get_train_dataloader()))
    trained = int((batch["labels"][:, 1:] != -100).sum())
    positions = batch["labels"][:, 1:].numel()
    assert 0 < trained < positions / 3  # mostly masked context, as in turn-level SFT

    model = sft_trainer.model.eval()
    with torch.no_grad():
        full = sft_trainer.compute_loss(model, dict(batch))
        with compact_lm_head_on_cpu():
            compact = sft_trainer.compute_loss(model, dict(batch))
        after = sft_trainer.compute_loss(model, dict(batch))
    assert scored == [positions, trained, positions]  # the patch is undone on leaving
    assert torch.allclose(compact, full, rtol=1e-5, atol=1e-6)
    assert torch.equal(after, full)
