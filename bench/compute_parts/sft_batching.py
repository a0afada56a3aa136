"""SFT batching (issue 43): the shared prompt encoded once per micro-batch, and teacher games
packed one sequence per game, against the plain per-row path.

`sft_batching(...)` returns (printing nothing) one dict:

- `paper_rows`: the paper's SFT rows (training.sft.reference_data, the paper's prompt) in
  micro-batches cut by length as TRL's batch_rebalance cuts them; SmolLM2-135M-Instruct with LoRA
  through training.sft.trainer.build_sft_trainer; variants `float32_plain`, `float32_shared`,
  `bfloat16_plain`, `bfloat16_shared` (bf16: frozen base in bf16 via games.precision.frozen_to,
  autocast, peft's LoRA input casts off), each a forward and backward (compute_loss, TRL's
  metrics included) of the same batches, interleaved batch by batch in one process;
- `teacher_games`: a handful of games the infogain teacher plays against the kb judge, per-turn
  rows against one packed sequence per game (training.sft.packing), each with and without the
  shared prompt, at `teacher_precision`;
- for each: seconds, tokens/s (TRL's num_tokens: every real token), trained tokens/s, the summed
  loss, the ratio to the first variant and the loss difference from it; the load average before
  and after.
"""

from __future__ import annotations

import copy
import io
import os
import time
from collections.abc import Sequence
from typing import Any

PAPER_VARIANTS = ("float32_plain", "float32_shared", "bfloat16_plain", "bfloat16_shared")


def _load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _trainer(model: Any, tokenizer: Any, rows: Sequence[dict], *, batch: int, lora_rank: int):
    from training.common.models import device_setup
    from training.sft.config import SFTJobConfig
    from training.sft.trainer import build_sft_trainer

    config = SFTJobConfig(
        base_model="x",
        lora=True,
        lora_rank=lora_rank,
        lora_alpha=2 * lora_rank,
        lora_dropout=0.0,
        global_batch_size=batch,
        per_device_batch_size=batch,
        max_steps=1,
    )
    return build_sft_trainer(
        config,
        model,
        tokenizer,
        rows,
        output_dir=os.path.join(os.environ.get("TMPDIR", "/tmp"), "bench-sft-batching"),
        setup=device_setup("float32"),  # the precision is set per variant below
        shared_prefix=True,
    )


def _at(trainer: Any, precision: str) -> Any:
    """The trainer's model at `precision`: frozen weights cast (games.precision.frozen_to)."""
    from games.precision import frozen_to

    if precision == "bfloat16":
        frozen_to(trainer.model, precision)
    return trainer


def _micro_batches(trainer: Any, size: int) -> list[dict]:
    """The trainer's rows sorted by length and cut into micro-batches of `size` (TRL's
    batch_rebalance cuts a step's rows by length), collated as training collates them."""
    rows = sorted(trainer.train_dataset, key=lambda r: len(r["input_ids"]))
    return [trainer.data_collator(rows[i : i + size]) for i in range(0, len(rows), size)]


def _step(trainer: Any, batch: dict, precision: str, shared: bool) -> tuple[float, float]:
    """One forward and backward of `batch`: (seconds, loss × trained tokens, i.e. summed)."""
    from peft.helpers import disable_input_dtype_casting

    from games.precision import autocast

    model = trainer.model
    model.train()
    model.zero_grad(set_to_none=True)
    trainer.shared_prefix = shared
    inputs = {k: v.clone() for k, v in batch.items()}
    start = time.perf_counter()
    with autocast("cpu", precision), disable_input_dtype_casting(model, precision == "bfloat16"):
        loss = trainer.compute_loss(model, inputs)
    loss.backward()
    seconds = time.perf_counter() - start
    trained = int((batch["labels"][:, 1:] != -100).sum())
    return seconds, float(loss.detach()) * trained


def _measure(
    variants: dict[str, tuple[Any, str, bool]], batches: Sequence[dict], rounds: int
) -> dict[str, Any]:
    """Every variant (trainer, precision, shared) on every batch, interleaved, after one untimed
    warm-up step each; summaries."""
    for trainer, precision, shared in variants.values():
        _step(trainer, batches[0], precision, shared)
    seconds = dict.fromkeys(variants, 0.0)
    losses = dict.fromkeys(variants, 0.0)
    for _ in range(rounds):
        for batch in batches:
            for name, (trainer, precision, shared) in variants.items():
                s, loss = _step(trainer, batch, precision, shared)
                seconds[name] += s
                losses[name] += loss / rounds
    tokens = rounds * sum(int(b["attention_mask"].sum()) for b in batches)
    trained = rounds * sum(int((b["labels"][:, 1:] != -100).sum()) for b in batches)
    first = next(iter(variants))
    return {
        "batches": len(batches),
        "rows": sum(len(b["input_ids"]) for b in batches),
        "tokens": tokens // rounds,
        "trained_tokens": trained // rounds,
        "variants": {
            name: {
                "seconds": round(seconds[name], 3),
                "tokens_per_s": round(tokens / seconds[name], 1),
                "trained_tokens_per_s": round(trained / seconds[name], 2),
                "summed_loss": round(losses[name], 5),
                "speedup": round(seconds[first] / seconds[name], 3),
                "loss_rel_diff": round(abs(losses[name] / losses[first] - 1), 7),
            }
            for name in variants
        },
        "baseline": first,
    }


def _teacher_rows(n_words: int, chat_format: Any) -> list[dict]:
    from training.common.data import gather_games
    from training.reporting import ConsoleReporter
    from training.sft.config import SFTJobConfig
    from training.sft.data import turn_examples

    config = SFTJobConfig(base_model="x", limit_words=n_words)  # infogain teacher, kb judge
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "bench-sft-batching-games")
    games = gather_games(config, ConsoleReporter(out, stream=io.StringIO()))
    return turn_examples(games, chat_format)


def sft_batching(
    *,
    rows: int = 16,
    batch_size: int = 8,
    rounds: int = 1,
    threads: int = 2,
    lora_rank: int = 16,
    teacher_words: int = 3,
    teacher_precision: str = "bfloat16",
    seed: int = 0,
    model: str = "smollm2-135m-instruct",
) -> dict[str, Any]:
    """The measurements of the module docstring: `rows` paper rows (drawn with `seed`) in
    micro-batches of `batch_size`, `teacher_words` teacher games, `rounds` passes, `threads`
    torch threads; `model` a base model name or folder. teacher_words=0 skips the teacher games,
    rows=0 the paper rows."""
    import torch

    from games.base_models import resolve_model
    from games.llm.chat import GuesserFormat
    from training.common.models import load_model, quiet_libraries
    from training.sft.data import pack_games
    from training.sft.packing import fit_rows
    from training.sft.reference_data import read_reference, reference_examples, sample_turns

    quiet_libraries()
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    chat_format = GuesserFormat.named("paper")
    base, tokenizer = load_model(resolve_model(model))
    result: dict[str, Any] = {
        "model": model,
        "lora_rank": lora_rank,
        "lora_dropout": 0.0,
        "threads": threads,
        "batch_size": batch_size,
        "rounds": rounds,
        "load_average_before": _load_average(),
    }
    if rows:
        paper = reference_examples(
            sample_turns(read_reference(), rows=rows, seed=seed), chat_format
        )
        trainers = {
            p: _at(
                _trainer(
                    copy.deepcopy(base), tokenizer, paper, batch=batch_size, lora_rank=lora_rank
                ),
                p,
            )
            for p in ("float32", "bfloat16")
        }
        batches = _micro_batches(trainers["float32"], batch_size)
        variants = {
            name: (trainers[name.split("_")[0]], name.split("_")[0], name.endswith("shared"))
            for name in PAPER_VARIANTS
        }
        result["paper_rows"] = _measure(variants, batches, rounds)
    if teacher_words:
        turn_rows = _teacher_rows(teacher_words, chat_format)
        turn_rows, _ = fit_rows(tokenizer, turn_rows, 650)
        packed, _ = fit_rows(tokenizer, pack_games(turn_rows), 650)
        per_turn = _at(
            _trainer(
                copy.deepcopy(base), tokenizer, turn_rows, batch=batch_size, lora_rank=lora_rank
            ),
            teacher_precision,
        )
        one_per_game = _at(
            _trainer(copy.deepcopy(base), tokenizer, packed, batch=batch_size, lora_rank=lora_rank),
            teacher_precision,
        )
        per_turn_batches = _micro_batches(per_turn, batch_size)
        packed_batches = _micro_batches(one_per_game, batch_size)
        teacher: dict[str, Any] = {
            "games": len({r["game"] for r in turn_rows}),
            "turn_rows": len(turn_rows),
            "packed_rows": len(packed),
            "precision": teacher_precision,
        }
        # the same questions both ways: time each variant over all its batches, interleaved
        summaries = {}
        for name, trainer, batches, shared in (
            ("per_turn_plain", per_turn, per_turn_batches, False),
            ("per_turn_shared", per_turn, per_turn_batches, True),
            ("packed_plain", one_per_game, packed_batches, False),
            ("packed_shared", one_per_game, packed_batches, True),
        ):
            summaries[name] = (trainer, batches, shared)
        for trainer, batches, shared in summaries.values():  # warm-up, untimed
            _step(trainer, batches[0], teacher_precision, shared)
        seconds = dict.fromkeys(summaries, 0.0)
        losses = dict.fromkeys(summaries, 0.0)
        for _ in range(rounds):
            for name, (trainer, batches, shared) in summaries.items():
                for batch in batches:
                    s, loss = _step(trainer, batch, teacher_precision, shared)
                    seconds[name] += s
                    losses[name] += loss / rounds
        trained = sum(int((b["labels"][:, 1:] != -100).sum()) for b in per_turn_batches)
        teacher["trained_tokens"] = trained
        teacher["trained_tokens_packed"] = sum(
            int((b["labels"][:, 1:] != -100).sum()) for b in packed_batches
        )
        teacher["variants"] = {
            name: {
                "seconds": round(seconds[name], 3),
                "trained_tokens_per_s": round(rounds * trained / seconds[name], 2),
                "summed_loss": round(losses[name], 5),
                "speedup": round(seconds["per_turn_plain"] / seconds[name], 3),
                "loss_rel_diff": round(abs(losses[name] / losses["per_turn_plain"] - 1), 7),
            }
            for name in summaries
        }
        result["teacher_games"] = teacher
    result["load_average_after"] = _load_average()
    return result
