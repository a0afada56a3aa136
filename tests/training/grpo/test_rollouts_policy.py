"""The policy while GRPO plays: LoRA merged for the games (the base weights restored bit for
bit after), and a prefix cache sized for every game of a step."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from games.precision import frozen_to
from training.grpo.rollouts import (
    kv_bytes_per_token,
    merge_for_rollouts,
    merged_lora,
    rollout_cache_mb,
)


def lora_policy(model_dir):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(model_dir)
    config = LoraConfig(r=4, target_modules=["q_proj", "v_proj", "down_proj"])
    policy = get_peft_model(base, config).eval()
    for name, param in policy.named_parameters():
        if "lora_B" in name:  # a trained adapter: B is no longer zero
            param.data.normal_(0, 0.05)
    return policy


def lora_policy_from(grpo_tiny):
    import copy

    from peft import LoraConfig, get_peft_model

    return get_peft_model(copy.deepcopy(grpo_tiny[0]), LoraConfig(r=2, target_modules=["q_proj"]))


IDS = torch.tensor([[1, 5, 9, 14, 3, 7, 2, 11]])


@torch.no_grad()
def test_merged_lora_gives_the_policys_logits_and_puts_the_base_back_bit_for_bit(grpo_tiny_dir):
    policy = lora_policy(grpo_tiny_dir)
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    unmerged = policy(input_ids=IDS).logits
    # the premise: the adapter changes the logits
    with policy.disable_adapter():
        assert not torch.allclose(policy(input_ids=IDS).logits, unmerged, atol=1e-3)
    assert merge_for_rollouts(policy)
    with merged_lora(policy):
        layer = policy.base_model.model.model.layers[0].self_attn.q_proj
        assert layer.merged
        assert torch.allclose(policy(input_ids=IDS).logits, unmerged, atol=1e-5)
    assert not layer.merged
    after = policy.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # not W + ΔW - ΔW
    assert torch.equal(policy(input_ids=IDS).logits, unmerged)


@torch.no_grad()
def test_a_bf16_base_merges_rounding_once_and_is_put_back_too(grpo_tiny):
    policy = frozen_to(lora_policy_from(grpo_tiny), "bfloat16")  # frozen base bf16, LoRA float32
    for name, param in policy.named_parameters():
        if "lora_B" in name:
            param.data.normal_(0, 0.05)
    layer = policy.base_model.model.model.layers[0].self_attn.q_proj
    weight = layer.get_base_layer().weight
    before = weight.detach().clone()
    assert merge_for_rollouts(policy)
    with merged_lora(policy):
        expected = (before.float() + layer.get_delta_weight("default")).to(torch.bfloat16)
        assert layer.get_base_layer().weight.dtype == torch.bfloat16
        assert torch.equal(layer.get_base_layer().weight, expected)
    assert torch.equal(layer.get_base_layer().weight, before) and not layer.merged
    assert not merge_for_rollouts(grpo_tiny[0])  # no adapter: nothing to merge


def smollm_like(dtype):
    config = SimpleNamespace(
        num_hidden_layers=30, num_key_value_heads=3, num_attention_heads=9, head_dim=64,
        hidden_size=576,
    )  # fmt: skip
    return SimpleNamespace(config=config, dtype=dtype)


def test_the_rollout_cache_holds_a_whole_step_of_games_within_the_memory_there_is():
    assert kv_bytes_per_token(smollm_like(torch.float32)) == 46_080  # SmolLM2-135M: 46 KB
    assert kv_bytes_per_token(smollm_like(torch.bfloat16)) == 23_040
    step = SimpleNamespace(games_per_step=64, max_turns=20, max_completion_length=40)
    tokens = 300 + 20 * (40 + 24)
    want = 64 * tokens * 46_080 * 1.25 / 2**20
    plenty = 64 * 2**30
    assert rollout_cache_mb(smollm_like(torch.float32), step, 300, plenty) == pytest.approx(want)
    assert rollout_cache_mb(smollm_like(torch.bfloat16), step, 300, plenty) == pytest.approx(
        want / 2
    )
    assert rollout_cache_mb(smollm_like(torch.float32), step, 300, 4 * 2**30) == 1024  # a quarter
    tiny = SimpleNamespace(games_per_step=4, max_turns=2, max_completion_length=8)
    assert rollout_cache_mb(smollm_like(torch.float32), tiny, 30, plenty) == 128  # the floor
