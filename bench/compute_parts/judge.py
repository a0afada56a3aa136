"""The pretrained judge's cross-encoder (MiniLM-L6 + merged LoRA + a linear head) at each
precision option, interleaved on the same pairs: answers per second of each variant, and how many
answers the shipped choice changes (games.judge_eval.precision_flips).

Variants, each one change over today's path (`float32`: float32 weights, batches sorted by the
pairs' characters, torch.inference_mode, sdpa attention):
- `no_grad`: torch.no_grad instead of inference_mode;
- `eager_attention`: the plain attention instead of sdpa;
- `token_sort`: batches sorted by token count (each pads to its longest pair);
- `autocast`: bf16 autocast over the float32 weights;
- `bf16_weights`: the merged weights cast to bf16 once, bf16 compute;
- `bf16_eager`: those with the plain attention;
- `shipped`: what the judge runs now at `bfloat16` (CrossEncoder._forward: bf16 weights, the
  plain attention, token-count batches).
Every variant's time includes tokenising. `one_answer_ms`: float32 and the shipped bf16 path
answering one new pair at a time (a person's game), median and p95, interleaved. Pairs are the
validation secrets' reference pairs (bench.judge.validation_pairs).
"""

from __future__ import annotations

import copy
import os
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext

import numpy as np

from games.judges.cross_encoder import CrossEncoder, load_cross_encoder_folder

Pairs = Sequence[tuple[str, str]]


def _char_sorted_forward(encoder: CrossEncoder, model, pairs: Pairs, *, grad_mode, context):
    """Today's path (before issue 43): batches sorted by characters, padded per batch."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    out = np.zeros(len(pairs), dtype=np.float32)
    with grad_mode(), context():
        for start in range(0, len(order), encoder.batch_size):
            chunk = order[start : start + encoder.batch_size]
            encoded = encoder.tokenizer(
                [pairs[i][0] for i in chunk],
                [pairs[i][1] for i in chunk],
                padding=True,
                truncation="longest_first",
                max_length=encoder.max_length,
                return_tensors="pt",
            )
            out[chunk] = model(**encoded).logits[:, 0].float().numpy()
    return out


def _variants(path=None) -> dict[str, Callable[[list], np.ndarray]]:
    import torch

    float32 = load_cross_encoder_folder(path, "float32")
    bf16 = load_cross_encoder_folder(path, "bfloat16")
    eager = copy.deepcopy(float32.model)
    eager.set_attn_implementation("eager")
    bf16_sdpa = copy.deepcopy(bf16.model)
    bf16_sdpa.set_attn_implementation("sdpa")
    to_bf16 = lambda: torch.autocast("cpu", dtype=torch.bfloat16)  # noqa: E731
    mode = torch.inference_mode

    def today(model, grad_mode=mode, context=nullcontext):
        return lambda pairs: _char_sorted_forward(
            float32, model, pairs, grad_mode=grad_mode, context=context
        )

    return {
        "float32": today(float32.model),
        "no_grad": today(float32.model, grad_mode=torch.no_grad),
        "eager_attention": today(eager),
        "token_sort": float32._forward,
        "autocast": today(float32.model, context=to_bf16),
        "bf16_weights": today(bf16_sdpa),
        "bf16_eager": today(bf16.model),
        "shipped": bf16._forward,
    }


def _one_at_a_time(variants: dict, pairs: Pairs, n: int = 200) -> dict:
    times: dict[str, list[float]] = {name: [] for name in variants}
    for pair in pairs[:n]:
        for name, forward in variants.items():
            start = time.perf_counter()
            forward([pair])
            times[name].append(1000 * (time.perf_counter() - start))
    return {
        name: {
            "median": round(statistics.median(t), 2),
            "p95": round(sorted(t)[int(0.95 * len(t))], 2),
        }
        for name, t in times.items()
    }


def judge_variants(
    pairs: Pairs | None = None,
    *,
    n_pairs: int = 1536,
    repeats: int = 3,
    threads: int | None = None,
    flips_pairs: Pairs | None = None,
    path=None,
) -> dict:
    """Answers per second of each variant (the best of `repeats` rounds, every round running
    each variant once on the same pairs, in turn), their logits' largest difference from
    float32's, and the shipped bf16 judge's answer flips against float32 on `flips_pairs`
    (default: the same pairs). Prints nothing."""
    import torch

    if pairs is None:
        from bench.judge import validation_pairs

        pairs = validation_pairs(n_pairs)
    pairs = list(pairs)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads or len(os.sched_getaffinity(0)))
    try:
        variants = _variants(path)
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        logits: dict[str, np.ndarray] = {}
        for forward in variants.values():  # warm-up: the first calls allocate, pick kernels
            forward(pairs[:64])
        for _ in range(repeats):
            for name, forward in variants.items():
                start = time.perf_counter()
                logits[name] = forward(pairs)
                seconds[name].append(time.perf_counter() - start)
        one = _one_at_a_time({name: variants[name] for name in ("float32", "shipped")}, pairs)
        threads_used = torch.get_num_threads()
    finally:
        torch.set_num_threads(previous)
    from games.judge_eval import precision_flips

    base = logits["float32"]
    rates = {name: len(pairs) / min(s) for name, s in seconds.items()}
    return {
        "pairs": len(pairs),
        "threads": threads_used,
        "repeats": repeats,
        "answers_per_s": {name: round(rate, 1) for name, rate in rates.items()},
        "speedup": {name: round(rate / rates["float32"], 3) for name, rate in rates.items()},
        "max_abs_logit_delta": {
            name: round(float(np.abs(value - base).max()), 5) for name, value in logits.items()
        },
        "sign_flips": {
            name: int(((value >= 0) != (base >= 0)).sum()) for name, value in logits.items()
        },
        "one_answer_ms": one,
        "answer_flips": precision_flips(flips_pairs if flips_pairs is not None else pairs, path),
        "loadavg": list(os.getloadavg()),
    }
