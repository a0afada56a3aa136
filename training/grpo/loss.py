"""The GRPO objective on multi-turn sequences: clipped ratios, optional k3 KL, loss aggregation.

Only the guesser's own generated tokens (`mask` = 1) carry loss: the log-ratio, the KL and the
loss are zeroed with `torch.where` at every other position, so environment tokens (system
prompt, judge feedback, chat markup, padding) get exactly zero gradient even when their
log-probs are extreme. Log-probs come from TRL's `selective_log_softmax`; the per-token
objective is TRL's (`-min(r·A, clip(r, 1−ε_low, 1+ε_high)·A) + β·k3`) and the clip fractions
are TRL's `clip_ratio/*` definitions; `tests/training/grpo/test_trl_equivalence.py` checks the
loss against TRL's own `GRPOTrainer._compute_loss`.

Dual clip (verl's `compute_policy_loss`, Ye et al. 2019, arXiv:1912.09729): with `clip_ratio_c`
c > 1, a token whose advantage is negative has its clipped loss capped at −A·c,
min(max(−r·A, −clip(r)·A), −A·c), so a ratio that has grown far past 1 on a bad action cannot
blow the loss up; positive advantages are untouched. For c > 1 + ε_high it is TRL's two-sided
clipping with `delta` = c. c = 0 turns it off (TRL's default objective).

The log-ratio is clamped to ±`log_ratio_clamp` (20, verl's) before `exp`, as verl's
`compute_policy_loss` does, so a token whose log-probs drifted far cannot give an infinite ratio.

Aggregation is expressed as per-token weights that sum to 1 over a mini-batch, so gradient
accumulation over any split into forward chunks gives exactly the mini-batch's loss:
- token-mean: every trained token weighs 1 / (trained tokens in the mini-batch) (TRL "bnpo", DAPO);
- seq-mean-token-mean: 1 / (tokens of its sequence × sequences) (TRL "grpo"); a sequence is a
  game (`sequence_ids`), even when its turns span several rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from trl.trainer.utils import entropy_from_logits, selective_log_softmax

TOKEN_MEAN, SEQ_MEAN_TOKEN_MEAN = "token-mean", "seq-mean-token-mean"


def token_logps(
    logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """log p(target) at the given temperature (logits[..., i, :] scores targets[..., i])."""
    return selective_log_softmax(logits.float(), targets, temperature=temperature)


def action_logps(
    model,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    action_mask: torch.Tensor,
    *,
    temperature: float = 1.0,
    with_entropy: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probs (and entropies, no grad) of the action tokens, shaped like `input_ids[:, 1:]` with
    zeros elsewhere. The LM head runs only where the next token is an action (`logits_to_keep`
    as a boolean mask), which on a tiny model is most of the cost saved."""
    targets = input_ids[:, 1:]
    where = action_mask[:, 1:].bool()
    keep = torch.zeros_like(input_ids, dtype=torch.bool)
    keep[:, :-1] = where
    logits = model(
        input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep, use_cache=False
    ).logits
    logits = logits.reshape(-1, logits.shape[-1])  # (actions, vocab)
    picked = token_logps(logits, targets[where], temperature)
    logps = torch.zeros(targets.shape, dtype=picked.dtype, device=picked.device).masked_scatter(
        where, picked
    )
    entropies = None
    if with_entropy:
        with torch.no_grad():
            flat = entropy_from_logits(logits.detach().float() / temperature)
            entropies = torch.zeros(
                targets.shape, dtype=flat.dtype, device=flat.device
            ).masked_scatter(where, flat)
    return logps, entropies


def aggregation_weights(
    mask: torch.Tensor, mode: str, sequence_ids: torch.Tensor | None = None
) -> torch.Tensor:
    """Per-token weights (zero off the mask) that sum to 1: the loss is Σ weight × per-token loss.
    Computed in float64 (the loss casts them to its own dtype)."""
    mask = mask.double()
    total = mask.sum()
    if total == 0:
        return torch.zeros_like(mask)
    if mode == TOKEN_MEAN:
        return mask / total
    if mode != SEQ_MEAN_TOKEN_MEAN:
        raise ValueError(f"unknown loss aggregation {mode!r}")
    if sequence_ids is None:
        sequence_ids = torch.arange(mask.shape[0], device=mask.device)
    _, seq = torch.unique(sequence_ids, return_inverse=True)
    per_seq = torch.zeros(int(seq.max()) + 1, dtype=mask.dtype, device=mask.device).index_add_(
        0, seq, mask.sum(-1)
    )
    n_seq = (per_seq > 0).sum()
    return mask / (per_seq[seq].clamp(min=1.0)[:, None] * n_seq)


@dataclass
class LossParts:
    per_token_loss: torch.Tensor  # zero off the mask
    ratio: torch.Tensor
    low_clipped: torch.Tensor  # bool: ratio < 1 − ε_low with A < 0 (TRL clip_ratio/low)
    high_clipped: torch.Tensor  # bool: ratio > 1 + ε_high with A > 0 (TRL clip_ratio/high)
    dual_clipped: torch.Tensor  # bool: A < 0 and the cap −A·c binds (verl's pg_clipfrac_lower)
    kl: torch.Tensor | None  # k3 per token, zero off the mask


def per_token_loss(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.28,
    clip_ratio_c: float = 0.0,
    ref_logps: torch.Tensor | None = None,
    beta: float = 0.0,
    kl_ratio_correction: bool = False,
    log_ratio_clamp: float | None = 20.0,
) -> LossParts:
    """−min(r·A, clip(r, 1−ε_low, 1+ε_high)·A) (+ β·k3) per token; `advantages` is (B,) or (B, T).
    `clip_ratio_c` > 1 caps the policy term of a negative-advantage token at −A·c (dual clip, as
    verl; 0 = off). `kl_ratio_correction` multiplies k3 by the ratio r (TRL's
    `use_bias_correction_kl`: the unbiased reverse-KL gradient of DeepSeek-V3.2); `LossParts.kl` is
    k3 itself either way. `log_ratio_clamp` bounds log r before exp (None: unbounded)."""
    if clip_ratio_c and not clip_ratio_c > 1:
        raise ValueError(f"clip_ratio_c must be 0 (off) or > 1, got {clip_ratio_c}")
    on = mask.bool()
    if advantages.dim() == 1:
        advantages = advantages[:, None]
    advantages = advantages.expand_as(logps)
    log_ratio = torch.where(on, logps - old_logps, torch.zeros_like(logps))
    if log_ratio_clamp is not None:
        log_ratio = log_ratio.clamp(-log_ratio_clamp, log_ratio_clamp)
    ratio = torch.exp(log_ratio)
    clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    loss = -torch.min(ratio * advantages, clipped * advantages)
    negative = advantages < 0
    if clip_ratio_c:
        cap = -advantages * clip_ratio_c
        dual = on & negative & (loss > cap)
        loss = torch.where(negative, torch.min(loss, cap), loss)
    else:
        dual = torch.zeros_like(on)
    kl = None
    if beta != 0.0:
        if ref_logps is None:
            raise ValueError("beta > 0 needs the reference model's log-probs")
        diff = torch.where(on, ref_logps - logps, torch.zeros_like(logps))
        kl = torch.where(on, torch.exp(diff) - diff - 1, torch.zeros_like(logps))
        loss = loss + beta * (kl * ratio if kl_ratio_correction else kl)
    loss = torch.where(on, loss, torch.zeros_like(loss))
    low = on & (ratio < 1 - epsilon_low) & negative
    high = on & (ratio > 1 + epsilon_high) & (advantages > 0)
    return LossParts(loss, ratio, low, high, dual, kl)


def grpo_loss(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    mode: str = TOKEN_MEAN,
    weights: torch.Tensor | None = None,
    sequence_ids: torch.Tensor | None = None,
    **loss_options: Any,
) -> tuple[torch.Tensor, LossParts]:
    """The aggregated loss and its parts; `loss_options` are per_token_loss's (the clip ranges,
    dual clip, KL and log-ratio clamp, with its defaults). Pass `weights` computed over the whole
    mini-batch when the forward runs in chunks (gradient accumulation); else they come from
    `mask` and `mode`."""
    parts = per_token_loss(logps, old_logps, advantages, mask, **loss_options)
    if weights is None:
        weights = aggregation_weights(mask, mode, sequence_ids)
    return (parts.per_token_loss * weights.to(parts.per_token_loss.dtype)).sum(), parts
