"""Top-k before top-p: the transformers backend's sampler draws from the same distribution, with
the same seeded draws, as the vocabulary-wide filter it replaced (kept here as the oracle).

One difference, on ties only: where tokens of equal probability straddle the top-p boundary the
old filter's unstable sort kept whichever came first; the new one keeps the lower token id (a
stable sort). Tied logits are checked against the oracle with a stable sort."""

from __future__ import annotations

import pytest
import torch

from games.llm.base import SamplingParams
from games.llm.sampling import top_k_candidates
from games.llm.transformers_backend import TransformersBackend

SETTINGS = [  # (top_k, top_p, temperature)
    (20, 0.8, 0.7),  # the paper's validation sampling
    (50, 1.0, 1.0),
    (5, 0.5, 1.3),
    (200, 0.95, 1.0),
    (0, 0.9, 1.0),  # no top-k: the whole vocabulary
    (0, 1.0, 1.0),
]


def oracle_kept(scaled: torch.Tensor, sampling: SamplingParams, stable=False) -> torch.Tensor:
    """The filtered probabilities of the sampler before the change, over the whole vocabulary."""
    kept = scaled.softmax(dim=-1)
    if sampling.top_k and sampling.top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, sampling.top_k, dim=-1).values[:, -1:]
        kept = kept.masked_fill(scaled < kth, 0.0)
    if sampling.top_p < 1.0:
        sorted_probs, order = kept.sort(dim=-1, descending=True, stable=stable)
        drop = sorted_probs.cumsum(dim=-1) - sorted_probs >= sampling.top_p * kept.sum(
            -1, keepdim=True
        )
        kept = kept.scatter(-1, order, sorted_probs.masked_fill(drop, 0.0))
    return kept


def oracle_draw(scaled, sampling: SamplingParams, uniforms: torch.Tensor, stable=False):
    kept = oracle_kept(scaled, sampling, stable)
    cdf = kept.cumsum(dim=-1)
    target = (uniforms * cdf[:, -1]).unsqueeze(-1)
    chosen = torch.searchsorted(cdf, target, right=True).squeeze(-1).clamp(max=kept.shape[-1] - 1)
    impossible = kept.gather(-1, chosen[:, None]).squeeze(-1) == 0
    return torch.where(impossible, kept.argmax(dim=-1), chosen)


def logits(rows: int, vocab: int, seed: int, *, tied: bool = False) -> torch.Tensor:
    x = torch.randn(rows, vocab, generator=torch.Generator().manual_seed(seed)) * 3
    # bf16 logits (what a bf16 model gives) tie often: the k-th value is shared by several tokens
    return x.to(torch.bfloat16).float() if tied else x


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("top_k,top_p,temperature", SETTINGS)
def test_kept_probabilities_and_seeded_draws_equal_the_vocabulary_wide_filter(
    top_k, top_p, temperature, tied
):
    sampling = SamplingParams(top_k=top_k, top_p=top_p, temperature=temperature)
    scaled = logits(32, 3000, seed=top_k + 7, tied=tied) / temperature
    if top_k:
        ids, kept = top_k_candidates(scaled, scaled.softmax(-1), top_k, top_p)
        ours = torch.zeros_like(scaled).scatter(-1, ids, kept)
        assert torch.allclose(ours, oracle_kept(scaled, sampling, tied), atol=1e-6, rtol=0)
    for draw in range(20):
        uniforms = torch.rand(32, generator=torch.Generator().manual_seed(100 + draw))
        chosen, picked = TransformersBackend._choose(scaled, sampling, uniforms)
        assert chosen.tolist() == oracle_draw(scaled, sampling, uniforms, tied).tolist()
        expected = scaled.log_softmax(-1).gather(-1, chosen[:, None]).squeeze(-1)
        assert torch.allclose(torch.tensor(picked), expected, atol=1e-5)


def test_ties_at_the_kth_value_stay_candidates():
    scaled = torch.tensor([[5.0, 1.0, 3.0, 3.0, 3.0, 0.0]])
    ids, kept = top_k_candidates(scaled, scaled.softmax(-1), 2, 1.0)
    assert sorted(ids[kept > 0].tolist()) == [0, 2, 3, 4]  # the three tied at the 2nd value


def test_a_uniform_at_the_top_of_the_cdf_picks_as_before():
    """u × mass rounding to the whole mass: the old sampler's fallback (the last token, or the
    most likely kept one), reproduced."""
    scaled = logits(8, 500, seed=3)
    for top_k, top_p in [(10, 1.0), (10, 0.6), (499, 1.0)]:
        sampling = SamplingParams(top_k=top_k, top_p=top_p)
        uniforms = torch.full((8,), 1.0)
        chosen, _ = TransformersBackend._choose(scaled, sampling, uniforms)
        assert chosen.tolist() == oracle_draw(scaled, sampling, uniforms).tolist()


def test_ties_beyond_the_margin_are_all_counted():
    """More tokens tied at the k-th value than the tie margin holds: every one stays a candidate,
    and the draws still equal the vocabulary-wide filter's."""
    from games.llm.sampling import TIE_MARGIN

    top_k, tied = 5, TIE_MARGIN + 12
    scaled = logits(4, 400, seed=11) - 10
    scaled[:, :3] = 4.0  # three above
    scaled[0, 50 : 50 + tied] = 2.0  # the k-th value shared by `tied` tokens in row 0
    ids, kept = top_k_candidates(scaled, scaled.softmax(-1), top_k, 1.0)
    assert sorted(ids[0][kept[0] > 0].tolist()) == [0, 1, 2, *range(50, 50 + tied)]
    sampling = SamplingParams(top_k=top_k, top_p=0.9)
    for draw in range(10):
        uniforms = torch.rand(4, generator=torch.Generator().manual_seed(draw))
        chosen, _ = TransformersBackend._choose(scaled, sampling, uniforms)
        assert chosen.tolist() == oracle_draw(scaled, sampling, uniforms, stable=True).tolist()
