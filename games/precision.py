"""One precision policy for every model that runs here: `auto`, `float32` or `bfloat16`.

`auto` is bfloat16 where the hardware multiplies bf16 natively, float32 elsewhere:
- a CUDA GPU that supports bf16;
- a CPU with AMX-BF16 or AVX512-BF16 (its flags read once from /proc/cpuinfo; on this platform's
  2-core machines a 1024×2048 @ 2048×2048 matmul runs 2.4× (AVX512-BF16) to 5.2× (AMX) faster
  in bf16, docs/explanation/performance.md);
- except decoding one row at a time on a CPU (a person's game against a model): there bf16 is no
  faster than float32 (bench/results/compute.json, generation at batch 1: 0.90× with AMX), so
  `auto` keeps float32.

Training at bf16 keeps the frozen base weights in bf16 and the trained parameters (LoRA, heads)
and their optimiser state in float32, under autocast (`frozen_to`, `autocast`). Spelling: the
configs take `bf16` / `fp32` too (`normalise`). `TWENTYQ_CPU_BF16=0` makes a CPU look as if it
had no bf16 units (the float32 fallback's tests), `=1` as if it had.

torch is imported only inside the functions that need it.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any

PRECISIONS = ("auto", "float32", "bfloat16")
RESOLVED = ("float32", "bfloat16")
ALIASES = {"fp32": "float32", "bf16": "bfloat16", "float": "float32"}
CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")
ENV_CPU_BF16 = "TWENTYQ_CPU_BF16"
HELP = (
    "auto = bfloat16 where the CPU (AMX/AVX512-BF16) or GPU computes it natively, float32 "
    "elsewhere and for one-row decoding on a CPU; frozen weights in bf16, trained ones in float32"
)


class PrecisionError(ValueError):
    pass


def normalise(name: str) -> str:
    """The canonical name of a precision (`bf16` → `bfloat16`); a clear error for any other."""
    value = ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    if value not in PRECISIONS:
        raise PrecisionError(
            f"unknown precision {name!r}; use one of {', '.join(PRECISIONS)} (or bf16, fp32)"
        )
    return value


def cpu_flags_bf16(cpuinfo: str) -> bool:
    """Whether a /proc/cpuinfo text lists a bf16 matrix or vector unit (AMX-BF16, AVX512-BF16)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags = set(value.split())
            return any(flag in flags for flag in CPU_BF16_FLAGS)
    return False


@lru_cache(maxsize=1)
def _cpu_bf16_detected() -> bool:
    try:
        return cpu_flags_bf16(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def cpu_has_bf16() -> bool:
    """Whether this CPU computes bf16 natively (TWENTYQ_CPU_BF16=0/1 overrides the detection)."""
    forced = os.environ.get(ENV_CPU_BF16, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    return _cpu_bf16_detected()


def gpu_has_bf16() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def resolve(precision: str = "auto", device: str = "cpu", *, one_row: bool = False) -> str:
    """`float32` or `bfloat16` for a model on `device` ("cpu", "cuda", "cuda:1", ...).
    `one_row`: the model decodes one sequence at a time (interactive play), where a CPU's bf16
    is no faster, so `auto` stays float32 there."""
    precision = normalise(precision)
    if precision != "auto":
        return precision
    if str(device).startswith("cuda"):
        return "bfloat16" if gpu_has_bf16() else "float32"
    return "bfloat16" if cpu_has_bf16() and not one_row else "float32"


def torch_dtype(precision: str) -> Any:
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16}[normalise(precision)]


def autocast(device: str, precision: str):
    """torch.autocast to bf16 on `device` when `precision` is bfloat16, else a no-op."""
    if normalise(precision) != "bfloat16":
        return nullcontext()
    import torch

    return torch.autocast(device_type=str(device).split(":")[0], dtype=torch.bfloat16)


def frozen_to(model: Any, precision: str) -> Any:
    """Frozen parameters in `precision`, trained ones (requires_grad: LoRA, heads) in float32,
    so the optimiser's state stays float32 and autocast reads the base weights without a cast
    at every layer."""
    import torch

    dtype = torch_dtype(precision)
    for module in model.modules():
        for param in module.parameters(recurse=False):
            want = torch.float32 if param.requires_grad else dtype
            if param.dtype != want and param.dtype.is_floating_point:
                param.data = param.data.to(want)
    return model
