"""Generation with the KV cache (games.llm.transformers_backend) at float32 and bf16, with the
old vocabulary-wide sampler and with top-k first: decode and prefill tokens/s per batch size,
variants interleaved in one process on the same prompts. Prints nothing; bench.compute does.

Variants: `float32` (today's path: float32 weights, whole-vocabulary top-p sort), `bfloat16`
(bf16 weights and KV cache, the old sampler), `top_k_first` (float32, the new sampler), `all`
(bf16 + top-k first). Sampling is the paper's validation sampling (T 0.7, top-p 0.8, top-k 20),
where the sampler matters; GRPO trains at T 1 without filters, where it does not.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import torch

from games.llm.base import PAPER_VAL_SAMPLING, SamplingParams
from games.types import Turn, Verdict

VARIANTS = {  # name: (precision, top-k first)
    "float32": ("float32", False),
    "bfloat16": ("bfloat16", False),
    "top_k_first": ("float32", True),
    "all": ("bfloat16", True),
}
QUESTIONS = [
    "Is it an animal?",
    "Is it bigger than a breadbox?",
    "Is it used indoors?",
    "Is it made of metal?",
    "Can you eat it?",
    "Is it a tool?",
    "Is it alive?",
    "Is it found in a kitchen?",
]


def legacy_choose(scaled: torch.Tensor, sampling: SamplingParams, uniforms: torch.Tensor):
    """The sampler before issue 43: top-k as a vocabulary mask, then a whole-vocabulary sort."""
    probs = scaled.softmax(dim=-1)
    if sampling.greedy:
        chosen = scaled.argmax(dim=-1)
    else:
        kept = probs
        if sampling.top_k and sampling.top_k < scaled.shape[-1]:
            kth = torch.topk(scaled, sampling.top_k, dim=-1).values[:, -1:]
            kept = kept.masked_fill(scaled < kth, 0.0)
        if sampling.top_p < 1.0:
            sorted_probs, order = kept.sort(dim=-1, descending=True)
            drop = sorted_probs.cumsum(dim=-1) - sorted_probs >= sampling.top_p * kept.sum(
                -1, keepdim=True
            )
            kept = kept.scatter(-1, order, sorted_probs.masked_fill(drop, 0.0))
        cdf = kept.cumsum(dim=-1)
        target = (uniforms.to(cdf.device) * cdf[:, -1]).unsqueeze(-1)
        chosen = (
            torch.searchsorted(cdf, target, right=True).squeeze(-1).clamp(max=probs.shape[-1] - 1)
        )
        impossible = kept.gather(-1, chosen[:, None]).squeeze(-1) == 0
        if bool(impossible.any()):
            chosen = torch.where(impossible, kept.argmax(dim=-1), chosen)
    picked = probs.gather(-1, chosen[:, None]).squeeze(-1)
    return chosen, picked.clamp(min=1e-45).log().tolist()


def guesser_chats(n: int) -> list[list[dict]]:
    """n 20Q guesser prompts (the paper's), histories of 0 to 7 turns."""
    from games.llm.chat import guesser_messages

    chats = []
    for i in range(n):
        verdicts = [Verdict.NO if (i + t) % 3 else Verdict.YES for t in range(i % 8)]
        turns = [
            Turn(t, QUESTIONS[(i + t) % len(QUESTIONS)], v, f"{v.value.capitalize()}.")
            for t, v in enumerate(verdicts)
        ]
        chats.append(guesser_messages(turns))
    return chats


def _backends(model: str, cache_mb: float) -> dict[str, Any]:
    from games.llm.transformers_backend import TransformersBackend

    out = {}
    for precision in ("float32", "bfloat16"):
        backend = TransformersBackend(
            model, device="cpu", precision=precision, prefix_cache_mb=cache_mb, max_batch_size=64
        )
        backend.eos_ids = set()  # every row decodes the full length: equal work per variant
        out[precision] = backend
    return out


def _use_sampler(backend: Any, top_k_first: bool) -> None:
    if top_k_first:
        backend.__dict__.pop("_choose", None)  # the class's sampler
    else:
        backend._choose = legacy_choose


def generation_variants(
    batch_sizes: Sequence[int] = (1, 8, 32, 64),
    *,
    model: str = "smollm2-135m-instruct",
    new_tokens: int = 16,
    repeats: int = 2,
    prefill_rows: int = 8,
    threads: int = 1,
) -> dict[str, Any]:
    """Decode tokens/s per batch size and variant (the prompts' keys/values already cached, so
    the decode loop alone is timed), prefill tokens/s per precision, and how far bf16's next-token
    log-probs are from float32's on the same prompts."""
    torch.set_num_threads(threads)
    backends = _backends(model, cache_mb=4096)
    sampling = SamplingParams(max_new_tokens=new_tokens, **PAPER_VAL_SAMPLING)
    encode = backends["float32"]._encode
    prompts = {b: encode(guesser_chats(b)) for b in batch_sizes}
    seeds = {b: list(range(b)) for b in batch_sizes}
    decode: dict[str, dict[str, list[float]]] = {v: {} for v in VARIANTS}
    prefill: dict[str, list[float]] = {p: [] for p in backends}
    fill = encode(guesser_chats(prefill_rows))
    for backend in backends.values():  # warm-up, and every prompt's keys/values cached
        for b in batch_sizes:
            backend.generate_ids(prompts[b], SamplingParams(max_new_tokens=1), seeds=seeds[b])
    for _ in range(repeats):
        for precision, backend in backends.items():  # prefill: nothing reused
            backend.clear_cache()
            start = time.perf_counter()
            backend.generate_ids(fill, SamplingParams(max_new_tokens=1), seeds=seeds[8][:1] * 8)
            prefill[precision].append(sum(map(len, fill)) / (time.perf_counter() - start))
            for b in batch_sizes:  # cache the prompts again
                backend.generate_ids(prompts[b], SamplingParams(max_new_tokens=1), seeds=seeds[b])
        for b in batch_sizes:
            for name, (precision, top_k_first) in VARIANTS.items():
                backend = backends[precision]
                _use_sampler(backend, top_k_first)
                before = backend.stats["decode_s"]
                backend.generate_ids(prompts[b], sampling, seeds=seeds[b])
                seconds = backend.stats["decode_s"] - before
                decode[name].setdefault(str(b), []).append(b * (new_tokens - 1) / seconds)
    for backend in backends.values():
        _use_sampler(backend, True)
    out: dict[str, Any] = {
        "model": model,
        "threads": threads,
        "new_tokens": new_tokens,
        "repeats": repeats,
        "sampling": PAPER_VAL_SAMPLING,
        "prompt_tokens_mean": statistics.mean(len(p) for p in prompts[max(batch_sizes)]),
        "decode_tokens_per_s": {
            v: {b: round(statistics.median(x), 1) for b, x in per.items()}
            for v, per in decode.items()
        },
        "prefill_tokens_per_s": {p: round(statistics.median(x), 1) for p, x in prefill.items()},
        "bf16_vs_float32": _logprob_difference(backends, fill),
    }
    out["decode_speedup_over_float32"] = {
        v: {b: round(tps / out["decode_tokens_per_s"]["float32"][b], 3) for b, tps in per.items()}
        for v, per in out["decode_tokens_per_s"].items()
    }
    out["prefill_speedup_bf16"] = round(
        out["prefill_tokens_per_s"]["bfloat16"] / out["prefill_tokens_per_s"]["float32"], 3
    )
    return out


@torch.inference_mode()
def _logprob_difference(backends: dict[str, Any], prompts: list[list[int]]) -> dict[str, float]:
    """Next-token log-probs after each prompt, bf16 against float32: max |Δ| over the tokens
    float32 gives ≥ 1% (those a sampler can draw), and how often the greedy token agrees."""
    logp = {}
    for precision, backend in backends.items():
        rows = [
            backend.model(input_ids=torch.tensor([p])).logits[0, -1].float().log_softmax(-1)
            for p in prompts
        ]
        logp[precision] = torch.stack(rows)
    ref, low = logp["float32"], logp["bfloat16"]
    likely = ref.exp() >= 0.01
    return {
        "max_abs_logprob_diff_likely_tokens": round(float((ref - low).abs()[likely].max()), 4),
        "greedy_agreement": float((ref.argmax(-1) == low.argmax(-1)).float().mean()),
        "rows": len(prompts),
    }


GRPO_VARIANTS = {  # name: (base precision, LoRA merged for the games, prefix cache)
    # the prefix cache: "fixed" a hard 128 MB cap (the old path), "grows" 128 MB grown to hold a
    # call's batch (the backend's default), "step" sized for the step up front (GRPO's rollouts)
    "float32": ("float32", False, "fixed"),  # the old path: LoRA unmerged, a 128 MB cache
    "bfloat16": ("bfloat16", False, "fixed"),
    "merged": ("float32", True, "fixed"),
    "step_cache": ("float32", False, "step"),
    "grown_cache": ("float32", False, "grows"),
    "all": ("bfloat16", True, "step"),
}


def grpo_rollout_variants(
    *,
    model: str = "smollm2-135m-instruct",
    secrets: int = 8,
    generations: int = 8,
    max_turns: int = 20,
    question_tokens: int = 24,
    repeats: int = 1,
    threads: int = 1,
    variants: Sequence[str] = tuple(GRPO_VARIANTS),
) -> dict[str, Any]:
    """The rollout phase of a GRPO step (secrets × generations games against the knowledge-base
    judge, at T 1 as GRPO samples) with a LoRA policy, per variant: seconds, tokens prefilled
    and reused, interleaved. The update is not here (training.grpo.update)."""
    import copy
    from types import SimpleNamespace

    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from games.base_models import resolve_model
    from games.guessers.llm import LLMGuesser
    from games.judges.kb import KBJudge
    from games.llm.base import encode_prompt
    from games.llm.chat import GuesserFormat
    from games.llm.transformers_backend import TransformersBackend
    from games.precision import frozen_to
    from games.rollout import rollout
    from games.types import GameConfig
    from training.grpo.rollouts import merged_lora, rollout_cache_mb

    torch.set_num_threads(threads)
    path = resolve_model(model)
    tokenizer = AutoTokenizer.from_pretrained(path)
    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    policy32 = get_peft_model(base, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear"))
    for name, param in policy32.named_parameters():
        if "lora_B" in name:  # a policy some steps into training
            param.data.normal_(0, 1e-3)
    policies = {"float32": policy32.eval()}
    if any(GRPO_VARIANTS[v][0] == "bfloat16" for v in variants):
        policies["bfloat16"] = frozen_to(copy.deepcopy(policy32), "bfloat16").eval()
    judge, fmt = KBJudge(), GuesserFormat(max_turns=max_turns)
    words = ["dog", "apple", "car", "piano", "river", "hammer", "cheese", "moon"]
    words = [words[i % len(words)] for i in range(secrets)]
    games = [w for w in words for _ in range(generations)]
    seeds = list(range(len(games)))
    step = SimpleNamespace(
        games_per_step=len(games), max_turns=max_turns, max_completion_length=question_tokens
    )
    prompt = len(encode_prompt(tokenizer, fmt.messages([])))
    sampling = SamplingParams(max_new_tokens=question_tokens, temperature=1.0)
    rows: dict[str, list[dict]] = {v: [] for v in variants}
    for _ in range(repeats):
        for name in variants:
            precision, merge, cache = GRPO_VARIANTS[name]
            policy = policies[precision]
            cache_mb = rollout_cache_mb(policy, step, prompt) if cache == "step" else 128
            backend = TransformersBackend.from_model(
                policy,
                tokenizer,
                prefix_cache_mb=cache_mb,
                max_batch_size=len(games),
                prefix_cache_grows=cache == "grows",
            )
            guesser = LLMGuesser(backend, sampling=sampling, chat_format=fmt)
            start = time.perf_counter()
            with merged_lora(policy) if merge else nullcontext():
                played = rollout(
                    guesser, judge, games, seeds=seeds, config=GameConfig(max_turns=max_turns)
                )
            rows[name].append(
                {
                    "seconds": time.perf_counter() - start,
                    "turns": sum(len(g.turns) for g in played),
                    "cache_mb": round(backend._cache.budget / 2**20) if backend._cache else 0,
                    **{k: backend.stats[k] for k in ("prefilled_tokens", "reused_tokens")},
                    **{k: round(backend.stats[k], 2) for k in ("prefill_s", "decode_s")},
                }
            )
    seconds = {v: statistics.median(r["seconds"] for r in runs) for v, runs in rows.items()}
    return {
        "model": model,
        "threads": threads,
        "games": len(games),
        "max_turns": max_turns,
        "question_tokens": question_tokens,
        "runs": rows,
        "seconds": {v: round(s, 2) for v, s in seconds.items()},
        "speedup_over_float32": {
            v: round(seconds["float32"] / s, 3) for v, s in seconds.items() if "float32" in seconds
        },
    }
