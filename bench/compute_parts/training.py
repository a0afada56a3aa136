"""SmolLM2 LoRA SFT through training.sft.trainer.build_sft_trainer on the paper's SFT rows, at each
precision variant, interleaved in one process on the same rows (issue 43; bench.compute calls
`sft_variants`, which prints nothing).

Variants (each a TRL trainer of its own over a copy of the same model, the same LoRA init and
the same batches; the compact LM head on, as in every run):
- `float32`: today's path (float32, lora_dropout 0.05);
- `bf16_autocast`: bf16 autocast alone (float32 weights, peft's input casts, dropout 0.05);
- `bf16_frozen`: + the frozen base in bf16 (training.common.models.train_at);
- `bf16_uncast`: + peft's per-layer input casts off (lora_inputs_uncast);
- `bfloat16`: the precision policy as runs use it (bf16, frozen base in bf16, no input casts),
  dropout 0.05 as today;
- `dropout0`: float32 with lora_dropout 0 alone;
- `shared_prefix`: float32 with each micro-batch's shared prompt encoded once alone
  (training.sft.prefix);
- `all`: bf16, frozen base in bf16, no input casts, lora_dropout 0 and the shared prompt (what
  `precision=auto`, the new dropout default and `shared_prefix` do on a bf16 CPU).
`bench.compute` runs float32, bfloat16, dropout0, shared_prefix and all (DEFAULT_VARIANTS).
Each round runs `steps` optimizer steps of every variant in turn (trainer.train() from the same
start: the same batches); a variant's tokens/s is its tokens (TRL's num_tokens: every input
token) over the time of its steps. The first batch's loss and LoRA gradients of each variant
are compared with float32's.
"""

from __future__ import annotations

import copy
import os
import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

VARIANTS = (
    "float32",
    "bf16_autocast",
    "bf16_frozen",
    "bf16_uncast",
    "bfloat16",
    "dropout0",
    "shared_prefix",
    "all",
)
DEFAULT_VARIANTS = ("float32", "bfloat16", "dropout0", "shared_prefix", "all")


@dataclass(frozen=True)
class Variant:
    precision: str  # resolved: float32 | bfloat16
    frozen_bf16: bool  # the frozen base cast to bf16
    uncast: bool  # peft's input casts off
    dropout: float
    shared_prefix: bool = False  # each micro-batch's shared prompt encoded once

    @classmethod
    def named(cls, name: str) -> Variant:
        return {
            "float32": cls("float32", False, False, 0.05),
            "bf16_autocast": cls("bfloat16", False, False, 0.05),
            "bf16_frozen": cls("bfloat16", True, False, 0.05),
            "bf16_uncast": cls("bfloat16", True, True, 0.05),
            "bfloat16": cls("bfloat16", True, True, 0.05),
            "dropout0": cls("float32", False, False, 0.0),
            "shared_prefix": cls("float32", False, False, 0.05, True),
            "all": cls("bfloat16", True, True, 0.0, True),
        }[name]


def paper_rows(n: int, tokenizer: Any, max_tokens: int, seed: int = 0) -> list[dict]:
    """`n` seeded rows of the paper's SFT file as training examples (the paper's prompt), each
    fitting in `max_tokens`."""
    from training.sft.data import fits
    from training.sft.reference_data import read_reference, reference_examples, sample_turns

    turns = sample_turns(read_reference(), rows=4 * n, seed=seed)
    rows = [r for r in reference_examples(turns) if fits(tokenizer, r, max_tokens)]
    return rows[:n]


def _trainer(variant: Variant, model: Any, tokenizer: Any, rows: list[dict], out: str, **cfg):
    import torch

    from training.common import trainer as common_trainer
    from training.common.config import TrainConfig
    from training.common.models import DeviceSetup
    from training.sft.trainer import build_sft_trainer

    config = TrainConfig(
        base_model="bench",
        lora=True,
        lora_dropout=variant.dropout,
        precision=variant.precision,
        learning_rate=1e-4,
        warmup_ratio=0.0,
        lr_scheduler="constant",
        **cfg,
    )
    setup = DeviceSetup("cpu", variant.precision)
    torch.manual_seed(0)  # the same LoRA init in every variant
    train_at = common_trainer.train_at
    if not variant.frozen_bf16:  # bf16 autocast over float32 weights
        common_trainer.train_at = lambda m, s: m
    try:
        return build_sft_trainer(
            config,
            copy.deepcopy(model),
            tokenizer,
            rows,
            output_dir=out,
            setup=setup,
            shared_prefix=variant.shared_prefix,
        )
    finally:
        common_trainer.train_at = train_at


def _contexts(trainer: Any, variant: Variant) -> ExitStack:
    from training.common.models import lora_inputs_uncast
    from training.common.trainer import compact_lm_head_on_cpu

    stack = ExitStack()
    stack.enter_context(compact_lm_head_on_cpu())
    stack.enter_context(lora_inputs_uncast(trainer.model, variant.uncast))
    return stack


def _first_batch(trainer: Any, variant: Variant) -> tuple[float, Any]:
    """The loss of the first batch and the LoRA gradients it gives (float32, flattened)."""
    import torch

    from games import precision

    batch = next(iter(trainer.get_train_dataloader()))
    model = trainer.model
    model.train()
    model.zero_grad(set_to_none=True)
    with _contexts(trainer, variant), precision.autocast("cpu", variant.precision):
        loss = trainer.compute_loss(model, batch)
    loss.backward()
    grads = torch.cat(
        [p.grad.float().flatten() for n, p in model.named_parameters() if p.requires_grad]
    )
    model.zero_grad(set_to_none=True)
    return float(loss.detach()), grads


class _Clock:
    """A TrainerCallback timing each optimizer step."""

    def __new__(cls):
        from transformers import TrainerCallback

        class Clock(TrainerCallback):
            def __init__(self):
                self.steps: list[float] = []
                self._began = 0.0

            def on_step_begin(self, args, state, control, **kwargs):
                self._began = time.perf_counter()

            def on_step_end(self, args, state, control, **kwargs):
                self.steps.append(time.perf_counter() - self._began)

        return Clock()


def sft_variants(
    *,
    base: str = "smollm2-135m-instruct",
    variants: tuple[str, ...] = DEFAULT_VARIANTS,
    rows: int = 16,
    batch_size: int = 4,
    steps: int = 2,
    rounds: int = 2,
    threads: int = 1,
    max_tokens: int = 650,
    seed: int = 0,
) -> dict[str, Any]:
    """Tokens/s of each variant and the first batch's loss and gradient agreement with float32
    (see the module's docstring). `rows` paper rows, `batch_size` per step, `steps` steps a
    round."""
    import tempfile

    import torch
    from transformers.trainer_callback import PrinterCallback

    from training.common.models import load_model, quiet_libraries

    quiet_libraries()
    before_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        model, tokenizer = load_model(base)
        examples = paper_rows(rows, tokenizer, max_tokens, seed)
        cfg = dict(
            global_batch_size=batch_size,
            per_device_batch_size=batch_size,
            max_steps=steps,
            max_tokens=max_tokens,
            seed=seed,
        )
        with tempfile.TemporaryDirectory() as tmp:
            chosen = {name: Variant.named(name) for name in variants}
            trainers, clocks = {}, {}
            for name, variant in chosen.items():
                trainers[name] = _trainer(
                    variant, model, tokenizer, examples, os.path.join(tmp, name), **cfg
                )
                trainers[name].remove_callback(PrinterCallback)
                clocks[name] = _Clock()
                trainers[name].add_callback(clocks[name])
            del model
            first = {}
            for name in chosen:
                torch.manual_seed(seed)  # the same dropout masks where the dropout is the same
                first[name] = _first_batch(trainers[name], chosen[name])
            timed = {name: [0.0, 0.0] for name in chosen}  # seconds, tokens
            for _ in range(rounds):
                for name, trainer in trainers.items():
                    clock = clocks[name]
                    clock.steps.clear()
                    tokens = trainer._total_train_tokens  # TRL's num_tokens (every input token)
                    with _contexts(trainer, chosen[name]):
                        trainer.train()
                    timed[name][0] += sum(clock.steps)
                    timed[name][1] += trainer._total_train_tokens - tokens
    finally:
        torch.set_num_threads(before_threads)
    result: dict[str, Any] = {}
    for name in chosen:
        seconds, tokens = timed[name]
        loss, grads = first[name]
        # against float32 at the same dropout (the same masks): the precision's effect alone
        same = [
            n
            for n in ("float32", "dropout0", "shared_prefix")
            if chosen.get(n)
            and chosen[n].dropout == chosen[name].dropout
            and chosen[n].precision == "float32"
        ]
        reference = first[same[0]] if same else None
        result[name] = {
            "tokens_per_second": tokens / seconds if seconds else None,
            "loss": loss,
            "compared_with": same[0] if same else None,  # None: no float32 at its dropout ran
            "loss_rel_diff": abs(loss - reference[0]) / abs(reference[0]) if reference else None,
            "grad_cosine": float(torch.nn.functional.cosine_similarity(grads, reference[1], dim=0))
            if reference
            else None,
            "grads_finite": bool(torch.isfinite(grads).all()),
        }
    today = result.get("float32", {}).get("tokens_per_second")
    for name in result:
        tps = result[name]["tokens_per_second"]
        result[name]["speedup"] = tps / today if today and tps else None
    return {
        "speedup": result.get("all", {}).get("speedup"),
        "variants": result,
        "rows": len(examples),
        "batch_size": batch_size,
        "steps_timed": rounds * steps,
        "threads": threads,
        "load_average": list(os.getloadavg()),
    }
