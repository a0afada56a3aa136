"""training.shipping.stack_adapters (issue 44): a stage trained on an earlier stage merged into
the base ships as one adapter on the base, and that adapter is the same model."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

from training.shipping import ShippingError, stack_adapters


def _randomised(model, config, seed):
    peft_model = get_peft_model(model, config)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in peft_model.named_parameters():
            if "lora_" in name:  # lora_B starts at zero: give both a real update
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.05)
    return peft_model


def test_two_stages_stack_into_one_adapter_of_the_same_model(tmp_path):
    torch.manual_seed(0)
    base = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=64,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        )
    ).eval()
    first = _randomised(
        copy.deepcopy(base), LoraConfig(r=4, lora_alpha=8, target_modules="all-linear"), 1
    )
    first.save_pretrained(tmp_path / "first")
    merged = first.merge_and_unload()
    second = _randomised(merged, LoraConfig(r=2, lora_alpha=6, target_modules="all-linear"), 2)
    second.save_pretrained(tmp_path / "second")
    ids = torch.randint(0, 64, (2, 7), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        expected = second(input_ids=ids).logits

    stack_adapters(tmp_path / "first", tmp_path / "second", tmp_path / "stacked")
    config = json.loads((tmp_path / "stacked" / "adapter_config.json").read_text())
    assert config["r"] == 6 and config["lora_alpha"] == 6
    stacked = PeftModel.from_pretrained(copy.deepcopy(base), tmp_path / "stacked").eval()
    with torch.no_grad():
        got = stacked(input_ids=ids).logits
        only_first = PeftModel.from_pretrained(copy.deepcopy(base), tmp_path / "first")(
            input_ids=ids
        ).logits
    assert torch.allclose(got, expected, atol=1e-5)
    assert not torch.allclose(only_first, expected, atol=1e-3)  # the second stage mattered


def test_adapters_of_different_modules_do_not_stack(tmp_path):
    from safetensors.torch import save_file

    for name, key in (("a", "q_proj"), ("b", "v_proj")):
        folder = tmp_path / name
        folder.mkdir()
        save_file(
            {f"base_model.model.{key}.lora_A.weight": torch.zeros(2, 4)},
            str(folder / "adapter_model.safetensors"),
        )
        (folder / "adapter_config.json").write_text(json.dumps({"r": 2, "lora_alpha": 2}))
    with pytest.raises(ShippingError, match="adapt different modules"):
        stack_adapters(tmp_path / "a", tmp_path / "b", tmp_path / "out")
