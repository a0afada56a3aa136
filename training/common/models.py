"""Devices, precision, model/tokenizer loading, LoRA configs, adapter merging and the guesser
prompt a model is trained with."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games import precision as precision_policy
from games.llm.chat import (
    DEFAULT_GUESSER_PROMPT,
    MODEL_RUN_CONFIG,
    GuesserFormat,
    model_guesser_prompt,
)

GENERATION_MARKER = re.compile(r"\{%-?\s*generation\s*-?%\}")


@dataclass(frozen=True)
class DeviceSetup:
    """Where a trainer runs and at which precision (games.precision: "float32" or "bfloat16",
    resolved); `world_size` > 1 under `accelerate launch` / torchrun."""

    device: str  # "cuda" or "cpu"
    precision: str  # resolved: float32 | bfloat16
    world_size: int = 1
    rank: int = 0

    def __post_init__(self) -> None:
        if self.precision not in precision_policy.RESOLVED:
            raise TypeError(
                f"DeviceSetup.precision is a resolved precision "
                f"({' or '.join(precision_policy.RESOLVED)}), got {self.precision!r}"
            )

    @property
    def bf16(self) -> bool:
        return self.precision == "bfloat16"

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def accumulation(self, global_batch: int, per_device: int) -> int:
        """Gradient-accumulation steps so that
        per_device × accumulation × world_size ≈ global_batch."""
        return max(1, -(-global_batch // (per_device * self.world_size)))


def device_setup(precision: str = "auto") -> DeviceSetup:
    """The device (CUDA when present), the precision `precision` resolves to there
    (games.precision: auto = bf16 on a bf16 GPU or a CPU with AMX/AVX512-BF16) and the
    processes."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    return DeviceSetup(device, precision_policy.resolve(precision, device), world, rank)


def train_at(model: Any, setup: DeviceSetup) -> Any:
    """The model ready to train at the setup's precision: at bf16 its frozen weights in bf16 (the
    LoRA base, a DPO reference) and the trained ones in float32 (their optimiser state too),
    computed under autocast; at float32 unchanged."""
    if setup.bf16:
        precision_policy.frozen_to(model, setup.precision)
    return model


@contextmanager
def lora_inputs_uncast(model: Any, active: bool = True) -> Iterator[None]:
    """Under bf16 autocast, peft's LoRA layers take their bf16 input as it comes: by default each
    casts it to its float32 weights' dtype and autocast casts it straight back, twice per layer
    (about 10% of a SmolLM2 LoRA step, issue 43). The computation is the same: autocast runs the
    LoRA matmuls in bf16 either way."""
    if not active:
        yield
        return
    from peft.helpers import disable_input_dtype_casting

    with disable_input_dtype_casting(model):
        yield


def quiet_libraries() -> None:
    """No telemetry pings (this platform runs without a network) and no progress bars in job
    logs."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from huggingface_hub import constants

    constants.HF_HUB_DISABLE_TELEMETRY = True
    import datasets
    import transformers

    datasets.disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()


def usable_cpus() -> int:
    """The cores this process may run on (its affinity: a container's or taskset's share)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1


@contextmanager
def cpu_threads(n: int) -> Iterator[None]:
    """torch uses `n` threads (0 = every core this process may run on) inside the block, then
    goes back (workers pin 1)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n or usable_cpus())
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _source(path: str) -> tuple[str, bool]:
    from games.base_models import resolve_model

    path = resolve_model(path)  # a base model's name (games.base_models): its checked folder
    local = os.path.expanduser(path)
    if os.path.isdir(local):
        return local, True
    if os.path.exists(local) or path.startswith((".", "/", "~")):
        raise FileNotFoundError(f"model folder not found: {path}")
    return path, not os.environ.get(
        "TWENTYQ_ALLOW_HUB"
    )  # a hub id: only from the local cache by default


def load_tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    source, local_only = _source(path)
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if not tokenizer.chat_template:
        raise ValueError(f"{path}: the tokenizer has no chat template (a guesser needs one)")
    return tokenizer


def load_model(path: str, *, adapter: str | None = None, dtype: str = "float32") -> tuple[Any, Any]:
    """(model, tokenizer) from a folder or hub id; an `adapter` folder is merged into the
    weights."""
    import torch
    from transformers import AutoModelForCausalLM

    source, local_only = _source(path)
    tokenizer = load_tokenizer(path)
    model = AutoModelForCausalLM.from_pretrained(
        source, local_files_only=local_only, dtype=getattr(torch, dtype)
    )
    if adapter:
        if not os.path.isdir(adapter):
            raise FileNotFoundError(f"adapter folder not found: {adapter}")
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter).merge_and_unload()
    if getattr(model.generation_config, "pad_token_id", None) is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def merge_adapter(base: str, adapter: str, out_dir: str | Path) -> Path:
    """Save base + adapter merged as full weights (so a new adapter can be trained on top)."""
    out = Path(out_dir)
    if (out / "config.json").is_file():
        return out  # already merged (a resumed run)
    model, tokenizer = load_model(base, adapter=adapter)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    for folder in (
        adapter,
        base,
    ):  # the run that made the weights: its guesser prompt goes with them
        if (Path(folder) / MODEL_RUN_CONFIG).is_file():
            shutil.copyfile(Path(folder) / MODEL_RUN_CONFIG, out / MODEL_RUN_CONFIG)
            break
    return out


def run_guesser_format(
    name: str, *model_folders: str | Path | None, max_turns: int
) -> tuple[GuesserFormat, str]:
    """The guesser format a run trains with, and its name: `name` ("paper", "short"), else the one
    the start model was trained with (recorded in its folder), else the paper's. The name goes into
    the run's resolved config, so its checkpoints play with the same prompt."""
    resolved = name or model_guesser_prompt(*model_folders) or DEFAULT_GUESSER_PROMPT
    return GuesserFormat.named(resolved, max_turns=max_turns), resolved


def lora_config(config: Any) -> Any:
    """A peft LoRA config for causal LMs from a config's lora_* fields (never on the LM head: TRL
    computes log-probs from its weight)."""
    from peft import LoraConfig

    return LoraConfig(
        r=config.lora_rank,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=config.target_modules,
        task_type="CAUSAL_LM",
        bias="none",
    )


def peft_config(config: Any) -> Any:
    """What a TRL trainer's `peft_config` gets: the LoRA config with config.lora, else None (every
    weight trained)."""
    return lora_config(config) if config.lora else None


@contextmanager
def loaded_model(
    config: Any, model_path: str, adapter_path: str | None
) -> Iterator[tuple[DeviceSetup, Any, Any]]:
    """(device setup, model, tokenizer) of a run, inside the config's torch threads on a CPU."""
    quiet_libraries()
    setup = device_setup(config.precision)
    with cpu_threads(config.cpu_threads if setup.device == "cpu" else 0):
        model, tokenizer = load_model(model_path, adapter=adapter_path)
        yield setup, model, tokenizer


def has_generation_markers(tokenizer: Any) -> bool:
    """Whether the chat template marks assistant text with {% generation %} (assistant-token
    masks)."""
    template = tokenizer.chat_template
    if isinstance(template, dict):
        template = template.get("default", "")
    return bool(GENERATION_MARKER.search(template or ""))


def count_parameters(model: Any) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    params = list(model.parameters())
    return sum(p.numel() for p in params if p.requires_grad), sum(p.numel() for p in params)
