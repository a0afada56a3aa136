"""The transformers backend's precision (games.precision): what `auto` resolves to for batched and
one-row decoding, with and without a bf16 CPU, and a bf16 model's cache and masks."""

from __future__ import annotations

import pytest
import torch

from games.llm.base import SamplingParams
from games.llm.chat import guesser_messages
from games.llm.transformers_backend import TransformersBackend, TransformersConfig
from games.precision import PrecisionError
from games.types import Turn, Verdict

CHATS = [
    guesser_messages([]),
    guesser_messages([Turn(0, "Is it an animal?", Verdict.YES, "Yes.")]),
]


@pytest.mark.parametrize(
    "cpu_bf16,one_row,expected",
    [("1", False, "bfloat16"), ("1", True, "float32"), ("0", False, "float32")],
)
def test_auto_is_bf16_for_batches_on_a_bf16_cpu_and_float32_otherwise(
    tiny_model_dir, monkeypatch, cpu_bf16, one_row, expected
):
    monkeypatch.setenv("TWENTYQ_CPU_BF16", cpu_bf16)
    backend = TransformersBackend(str(tiny_model_dir), device="cpu", one_row=one_row)
    assert backend.precision == expected
    assert backend.model.dtype == getattr(torch, expected)


def test_explicit_precision_wins_and_spellings_are_normalised(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("TWENTYQ_CPU_BF16", "0")
    assert TransformersConfig(model="m", precision="bf16").precision == "bfloat16"
    backend = TransformersBackend(str(tiny_model_dir), device="cpu", precision="bf16")
    assert backend.precision == "bfloat16"
    with pytest.raises(PrecisionError, match="unknown precision 'fp16'"):
        TransformersConfig(model="m", precision="fp16")


def test_bf16_keeps_its_cache_and_masks_in_bf16_and_stays_close_to_float32(
    tiny_model_dir, tiny_backend
):
    low = TransformersBackend(str(tiny_model_dir), device="cpu", precision="bfloat16")
    sampling = SamplingParams(max_new_tokens=6, temperature=1.0)
    out = low.generate(CHATS, sampling, seeds=[1, 2])
    buffers = [b for e in low._cache.entries.values() for pair in e.buffers for b in pair]
    assert buffers and all(b.dtype == torch.bfloat16 for b in buffers)
    if low._sdpa:
        mask = torch.ones(2, 5, dtype=torch.long)
        assert low._attention_mask(mask, 1).dtype == torch.bfloat16
        assert low._attention_mask(mask, 3).dtype == torch.bfloat16
    # the same tokens scored at float32: bf16's log-probs are near, not equal
    reply = [g.text or "Is it a dog?" for g in out]
    ours, reference = low.score(CHATS, reply), tiny_backend.score(CHATS, reply)
    assert ours == pytest.approx(reference, abs=0.05 * max(map(abs, reference)) + 0.05)
    assert all(torch.isfinite(torch.tensor(g.logprobs)).all() for g in out)


def test_a_bf16_adapter_merges_in_float32_then_rounds(tiny_model_dir, tmp_path):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    lora = get_peft_model(
        AutoModelForCausalLM.from_pretrained(tiny_model_dir),
        LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False),
    )
    lora.save_pretrained(tmp_path / "adapter")
    merged = lora.merge_and_unload()
    low = TransformersBackend(
        str(tiny_model_dir), adapter=str(tmp_path / "adapter"), precision="bfloat16"
    )
    name = "model.layers.0.self_attn.q_proj.weight"
    got, want = low.model.state_dict()[name], merged.state_dict()[name]
    assert got.dtype == torch.bfloat16
    assert torch.equal(got, want.to(torch.bfloat16))  # one rounding of the float32 merge
