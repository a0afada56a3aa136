"""The transformers backend's sampler (`choose_next_tokens`): the next token of each row from its
scaled logits, greedy or one inverse-CDF draw per row after top-k and top-p filtering."""

from __future__ import annotations

import torch

from games.llm.base import SamplingParams


def choose_next_tokens(
    scaled: torch.Tensor, sampling: SamplingParams, uniforms: torch.Tensor
) -> tuple[torch.Tensor, list[float]]:
    """The next token of each row (greedy, or inverse-CDF sampling with one uniform per row
    after top-k/top-p filtering) and its log-prob under softmax(`scaled`), unfiltered.
    With top-k, top-p runs on the k candidates only (ties at the k-th value kept, as a mask
    over the vocabulary keeps them): the same distribution and draws as filtering the whole
    vocabulary, without sorting 49k tokens per row and step."""
    probs = scaled.softmax(dim=-1)
    if sampling.greedy:
        chosen = scaled.argmax(dim=-1)
    elif sampling.top_k and sampling.top_k < scaled.shape[-1]:
        chosen = _sample_top_k(scaled, probs, sampling, uniforms)
    else:
        chosen = _sample_vocabulary(probs, sampling.top_p, uniforms)
    # log of the chosen probability: as exact as log_softmax for any token that can be drawn
    picked = probs.gather(-1, chosen[:, None]).squeeze(-1)
    if bool((picked > 0).all()):
        return chosen, picked.log().tolist()
    return chosen, scaled.log_softmax(dim=-1).gather(-1, chosen[:, None]).squeeze(-1).tolist()


def _top_p_kept(kept: torch.Tensor, top_p: float) -> torch.Tensor:
    """`kept` (probabilities, 0 = filtered out) with the top-p nucleus kept: the most probable
    tokens until their mass reaches top_p of the kept mass, the token that crosses included."""
    if top_p >= 1.0:
        return kept
    sorted_probs, order = kept.sort(dim=-1, descending=True, stable=True)
    drop = sorted_probs.cumsum(dim=-1) - sorted_probs >= top_p * kept.sum(-1, keepdim=True)
    return kept.scatter(-1, order, sorted_probs.masked_fill(drop, 0.0))


def _draw(kept: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """Inverse-CDF draw over `kept` (in token order), one uniform per row: the position of the
    first cdf value above u × mass; past the end, the last position (len - 1)."""
    cdf = kept.cumsum(dim=-1)
    target = (uniforms.to(cdf.device) * cdf[:, -1]).unsqueeze(-1)
    return torch.searchsorted(cdf, target, right=True).squeeze(-1)


def _sample_vocabulary(probs: torch.Tensor, top_p: float, uniforms: torch.Tensor) -> torch.Tensor:
    """Top-p (or no filter) over the whole vocabulary."""
    kept = _top_p_kept(probs, top_p)
    chosen = _draw(kept, uniforms).clamp(max=probs.shape[-1] - 1)
    impossible = kept.gather(-1, chosen[:, None]).squeeze(-1) == 0  # rounding at the cdf's top
    if bool(impossible.any()):
        chosen = torch.where(impossible, kept.argmax(dim=-1), chosen)
    return chosen


TIE_MARGIN = 16  # candidates beyond the k-th looked at for ties before a full count


def top_k_candidates(
    scaled: torch.Tensor, probs: torch.Tensor, top_k: int, top_p: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The candidates of top-k then top-p: their token ids in token order and their filtered
    probabilities (0 = dropped). The candidates are every token at least as likely as the k-th,
    so ties at the k-th value stay, as in a vocabulary-wide mask."""
    vocab = scaled.shape[-1]
    # bf16 logits tie often at the k-th value: a margin of extra candidates holds the ties
    # without counting over the whole vocabulary (a full-size temporary per row and step)
    values, ids = torch.topk(scaled, min(top_k + TIE_MARGIN, vocab), dim=-1)
    kth = values[:, top_k - 1 : top_k]
    if values.shape[-1] < vocab and bool((values[:, -1:] >= kth).any()):
        width = int((scaled >= kth).sum(-1).max())  # ties beyond the margin: count them all
        values, ids = torch.topk(scaled, width, dim=-1)
    else:
        width = int((values >= kth).sum(-1).max())  # k, more where the k-th value is tied
        values, ids = values[:, :width], ids[:, :width]
    ids, order = ids.sort(dim=-1)  # token order, as the vocabulary-wide cdf runs
    kept = probs.gather(-1, ids).masked_fill(values.gather(-1, order) < kth, 0.0)
    return ids, _top_p_kept(kept, top_p)


def _sample_top_k(
    scaled: torch.Tensor, probs: torch.Tensor, sampling: SamplingParams, uniforms: torch.Tensor
) -> torch.Tensor:
    """Top-k, then top-p within the candidates, then the draw over the candidates only: the
    cdf and the draw are those of the vocabulary-wide mask."""
    vocab = scaled.shape[-1]
    ids, kept = top_k_candidates(scaled, probs, sampling.top_k, sampling.top_p)
    width = ids.shape[-1]
    at = _draw(kept, uniforms)
    past = at >= width  # the vocabulary-wide draw lands on its last token there
    at = at.clamp(max=width - 1)
    chosen = torch.where(past, vocab - 1, ids.gather(-1, at[:, None]).squeeze(-1))
    mass = kept.gather(-1, at[:, None]).squeeze(-1)
    mass = torch.where(past & (ids[:, -1] != vocab - 1), 0.0, mass)
    impossible = mass == 0  # rounding at the cdf's top
    if bool(impossible.any()):
        best = ids.gather(-1, kept.argmax(dim=-1, keepdim=True)).squeeze(-1)
        chosen = torch.where(impossible, best, chosen)
    return chosen
