"""games.precision: one policy for the precision every model runs at (issue 43)."""

import pytest
import torch

from games import precision
from games.registry import SpecError, build_guesser, split_precision

AMX = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f amx_bf16 amx_tile\n"
AVX512 = "flags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\n"
PLAIN = "flags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n"
ARM = "Features\t: fp asimd evtstrm aes\n"


@pytest.mark.parametrize(
    ("cpuinfo", "expected"),
    [(AMX, True), (AVX512, True), (PLAIN, False), (ARM, False), ("", False)],
)
def test_bf16_units_are_read_from_the_cpu_flags(cpuinfo, expected):
    assert precision.cpu_flags_bf16(cpuinfo) is expected


def test_auto_is_bf16_on_a_cpu_with_bf16_units_except_one_row_decoding(monkeypatch):
    monkeypatch.setenv(precision.ENV_CPU_BF16, "1")
    assert precision.resolve("auto", "cpu") == "bfloat16"
    assert precision.resolve("auto", "cpu", one_row=True) == "float32"
    assert precision.resolve("float32", "cpu") == "float32"


def test_auto_falls_back_to_float32_on_a_cpu_without_bf16(monkeypatch):
    monkeypatch.setenv(precision.ENV_CPU_BF16, "0")
    assert not precision.cpu_has_bf16()
    assert precision.resolve("auto", "cpu") == "float32"
    assert precision.resolve("bf16", "cpu") == "bfloat16"  # asked for: honoured (emulated)


def test_spellings_are_normalised_and_unknown_ones_rejected():
    assert precision.normalise("bf16") == "bfloat16"
    assert precision.normalise(" FP32 ") == "float32"
    with pytest.raises(precision.PrecisionError, match="unknown precision 'fp8'"):
        precision.normalise("fp8")


def test_training_keeps_frozen_weights_in_bf16_and_trained_ones_in_float32():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    model[0].requires_grad_(False)
    precision.frozen_to(model, "bfloat16")
    assert model[0].weight.dtype == torch.bfloat16
    assert model[1].weight.dtype == torch.float32
    with precision.autocast("cpu", "bfloat16"):
        out = model(torch.randn(3, 4))
    assert out.dtype == torch.bfloat16
    out.float().sum().backward()
    assert model[1].weight.grad.dtype == torch.float32


def test_a_spec_names_its_precision_and_only_model_kinds_take_one():
    assert split_precision("hf:/models/x?precision=bf16") == ("hf:/models/x", "bfloat16")
    assert split_precision("pretrained") == ("pretrained", None)
    with pytest.raises(SpecError, match="runs no model here"):
        build_guesser("infogain?precision=bfloat16")
    with pytest.raises(SpecError, match="unknown precision"):
        split_precision("hf:/m?precision=half")
