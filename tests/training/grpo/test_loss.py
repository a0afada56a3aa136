"""The GRPO objective: asymmetric and dual clipping, aggregation on ragged masks, masked tokens'
gradient."""

from __future__ import annotations

import math

import pytest
import torch

from training.grpo.loss import aggregation_weights, grpo_loss, per_token_loss, token_logps

# ratio, advantage, per-token loss −min(r·A, clip(r, 0.8, 1.28)·A), clipped low / high
# (TRL's definitions)
CASES = [
    (0.79, -1.0, 0.80, True, False),  # below 1 − 0.2 with A < 0: clipped to 0.8
    (0.81, -1.0, 0.81, False, False),  # just inside
    (0.79, +1.0, -0.79, False, False),  # below the range but A > 0: min keeps the unclipped term
    (1.29, +1.0, -1.28, False, True),  # above 1 + 0.28 with A > 0: clipped to 1.28
    (1.27, +1.0, -1.27, False, False),  # just inside (a symmetric 0.2 would have clipped it)
    (1.29, -1.0, 1.29, False, False),  # above the range but A < 0: unclipped
    (0.50, +2.0, -1.00, False, False),
]


def _case_tensors():
    ratios = torch.tensor([[c[0] for c in CASES]], dtype=torch.float64)
    logps = torch.log(ratios).requires_grad_(True)
    old = torch.zeros_like(logps)
    adv = torch.tensor([[c[1] for c in CASES]], dtype=torch.float64)
    return logps, old, adv, torch.ones_like(adv, dtype=torch.long)


def test_asymmetric_clipping_exact_objective_and_clip_fractions():
    logps, old, adv, mask = _case_tensors()
    loss, parts = grpo_loss(logps, old, adv, mask, epsilon_low=0.2, epsilon_high=0.28)
    expected = [c[2] for c in CASES]
    assert parts.per_token_loss[0].tolist() == pytest.approx(expected, abs=1e-12)
    # token-mean: (0.8 + 0.81 − 0.79 − 1.28 − 1.27 + 1.29 − 1.0) / 7 = −1.44 / 7
    assert float(loss.detach()) == pytest.approx(-1.44 / 7, abs=1e-12)
    assert parts.low_clipped[0].tolist() == [c[3] for c in CASES]
    assert parts.high_clipped[0].tolist() == [c[4] for c in CASES]
    assert float(parts.low_clipped.sum()) / 7 == pytest.approx(1 / 7)
    assert float(parts.high_clipped.sum()) / 7 == pytest.approx(1 / 7)
    # d loss / d logp = −A·r / 7 where the unclipped term is the minimum; exactly 0 where clipped
    loss.backward()
    grads = logps.grad[0].tolist()
    for (ratio, a, _, low, high), g in zip(CASES, grads):
        assert g == (0.0 if low or high else pytest.approx(-a * ratio / 7, abs=1e-12))


def test_symmetric_clip_would_clip_what_clip_higher_keeps():
    logps, old, adv, mask = _case_tensors()
    _, parts = grpo_loss(logps, old, adv, mask, epsilon_low=0.2, epsilon_high=0.2)
    assert parts.per_token_loss[0, 4].item() == pytest.approx(-1.2)  # 1.27 clipped to 1.2
    assert parts.high_clipped[0].tolist() == [False, False, False, True, True, False, False]


# verl's dual clip (compute_policy_loss, clip_ratio_c = c = 3, ε 0.2 / 0.28), by hand:
# clip1 = max(−A·r, −A·clip(r, 0.8, 1.28)); a token with A < 0 loses min(clip1, −A·c)
DUAL_CASES = [
    # ratio, advantage, loss without the dual clip, with it, the dual clip binds
    (4.0, -1.0, 4.0, 3.0, True),  # max(4, 1.28) = 4 > −A·c = 3: capped at 3
    (2.0, -1.0, 2.0, 2.0, False),  # 2 < 3: the cap does not bind
    (4.0, +2.0, -2.56, -2.56, False),  # A > 0: clipped high to 1.28·2, no dual clip
    (0.5, -0.5, 0.4, 0.4, False),  # clipped low to 0.8·0.5 = 0.4 < 1.5
    (7.0, -0.5, 3.5, 1.5, True),  # 3.5 > −A·c = 1.5: capped at 1.5
]


@pytest.mark.parametrize("c", [0.0, 3.0])
def test_dual_clip_caps_negative_advantage_tokens_at_minus_a_times_c_as_verl(c):
    ratios = torch.tensor([[r for r, *_ in DUAL_CASES]], dtype=torch.float64)
    logps = torch.log(ratios).requires_grad_(True)
    adv = torch.tensor([[a for _, a, *_ in DUAL_CASES]], dtype=torch.float64)
    mask = torch.ones_like(adv, dtype=torch.long)
    loss, parts = grpo_loss(
        logps,
        torch.zeros_like(logps),
        adv,
        mask,
        epsilon_low=0.2,
        epsilon_high=0.28,
        clip_ratio_c=c,
    )
    column, binds = (3, [d[4] for d in DUAL_CASES]) if c else (2, [False] * len(DUAL_CASES))
    assert parts.per_token_loss[0].tolist() == pytest.approx([d[column] for d in DUAL_CASES])
    assert parts.dual_clipped[0].tolist() == binds
    # token-mean: with c = 3 (3 + 2 − 2.56 + 0.4 + 1.5) / 5 = 0.868, pg_clipfrac_lower 2/5;
    # off: (4 + 2 − 2.56 + 0.4 + 3.5) / 5 = 1.468, TRL's objective
    assert float(loss.detach()) == pytest.approx(0.868 if c else 1.468, abs=1e-12)
    assert float(parts.dual_clipped.sum()) / 5 == (0.4 if c else 0.0)
    # a capped token's loss is the constant −A·c: exactly zero gradient; the others keep theirs
    loss.backward()
    for (ratio, a, _, _, bound), g in zip(DUAL_CASES, logps.grad[0].tolist()):
        unclipped = ratio < 1.28 if a > 0 else ratio > 0.8
        want = -a * ratio / 5 if unclipped and not (bound and c) else 0.0
        assert g == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("c", [1.0, 0.5, -3.0])
def test_dual_clip_refuses_a_bound_that_is_not_above_one(c):
    logps, old, adv, mask = _case_tensors()
    with pytest.raises(ValueError, match="clip_ratio_c"):
        grpo_loss(logps, old, adv, mask, clip_ratio_c=c)


def test_dual_clip_changes_nothing_where_it_does_not_bind():
    """On CASES no ratio with A < 0 exceeds c = 3: the loss is TRL's, to the last bit."""
    logps, old, adv, mask = _case_tensors()
    off, parts_off = grpo_loss(logps, old, adv, mask)
    on, parts_on = grpo_loss(logps, old, adv, mask, clip_ratio_c=3.0)
    assert torch.equal(parts_off.per_token_loss, parts_on.per_token_loss)
    assert float(on.detach()) == float(off.detach()) and not bool(parts_on.dual_clipped.any())


def test_k3_kl_term_on_hand_values():
    logps = torch.tensor([[math.log(0.5), math.log(0.25)]], dtype=torch.float64)
    ref = torch.tensor([[math.log(0.25), math.log(0.25)]], dtype=torch.float64)
    adv = torch.zeros(1, 2, dtype=torch.float64)
    parts = per_token_loss(logps, logps, adv, torch.ones(1, 2), ref_logps=ref, beta=0.5)
    # k3 = exp(ref − logp) − (ref − logp) − 1: 0.5 + ln 2 − 1 = 0.193147 for the first,
    # 0 for the second
    assert parts.kl[0].tolist() == pytest.approx([0.5 + math.log(2) - 1, 0.0], abs=1e-12)
    assert parts.per_token_loss[0].tolist() == pytest.approx(
        [0.5 * (0.5 + math.log(2) - 1), 0.0], abs=1e-12
    )
    with pytest.raises(ValueError):
        per_token_loss(logps, logps, adv, torch.ones(1, 2), beta=0.1)


def _ragged():
    """Four rows; per-token loss is −A (ratio 1). Row 3 has no trained token."""
    mask = torch.tensor([[1, 1, 1, 0], [0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    adv = torch.tensor(
        [[1.0, 2.0, 3.0, 99.0], [99.0, 4.0, 99.0, 99.0], [5.0, 6.0, 99.0, 99.0], [99.0] * 4],
        dtype=torch.float64,
    )
    logps = torch.full(adv.shape, -1.0, dtype=torch.float64)
    return logps, adv, mask


def test_token_mean_on_a_ragged_mask():
    logps, adv, mask = _ragged()
    loss, _ = grpo_loss(logps, logps, adv, mask, mode="token-mean")
    assert float(loss) == pytest.approx(-(1 + 2 + 3 + 4 + 5 + 6) / 6)  # −3.5


def test_seq_mean_token_mean_on_a_ragged_mask():
    logps, adv, mask = _ragged()
    loss, _ = grpo_loss(logps, logps, adv, mask, mode="seq-mean-token-mean")
    # rows: −6/3 = −2, −4, −11/2 = −5.5; the empty row is not a sequence: −11.5 / 3
    assert float(loss) == pytest.approx(-11.5 / 3)
    # rows 0 and 2 are turns of one game: game 0 = −(1+2+3+5+6)/5 = −3.4, game 1 = −4 -> −3.7
    loss, _ = grpo_loss(
        logps, logps, adv, mask, mode="seq-mean-token-mean", sequence_ids=torch.tensor([0, 1, 0, 2])
    )
    assert float(loss) == pytest.approx(-3.7)


@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean"])
def test_weights_computed_on_the_whole_batch_make_chunked_accumulation_exact(mode):
    logps, adv, mask = _ragged()
    games = torch.tensor([0, 1, 0, 2])
    weights = aggregation_weights(mask, mode, games)
    assert float(weights.sum()) == pytest.approx(1.0)
    assert bool((weights[mask == 0] == 0).all())
    whole, _ = grpo_loss(logps, logps, adv, mask, weights=weights)
    parts = [
        grpo_loss(logps[a:b], logps[a:b], adv[a:b], mask[a:b], weights=weights[a:b])[0]
        for a, b in ((0, 1), (1, 4))
    ]
    assert float(sum(parts)) == pytest.approx(float(whole), abs=1e-12)
    with pytest.raises(ValueError):
        aggregation_weights(mask, "sum")


def test_environment_tokens_get_exactly_zero_gradient_through_the_tiny_model(grpo_tiny):
    model, tokenizer = grpo_tiny
    chat = [
        {"role": "user", "content": "Ask your question:"},
        {"role": "assistant", "content": "Is it an animal?"},
        {"role": "user", "content": "Yes."},
        {"role": "assistant", "content": "Is it a dog?"},
    ]
    from training.common.chat import encode_chat

    encoded = encode_chat(
        tokenizer, chat, train="all"
    )  # guesser turns trained, judge turn and markup masked
    ids = torch.tensor([encoded.input_ids])
    action = torch.tensor([[int(label != -100) for label in encoded.labels]])
    assert 0 < int(action.sum()) < ids.shape[1] - 4 and len(encoded.spans) == 2
    logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
    logits.retain_grad()
    logps = token_logps(logits[:, :-1], ids[:, 1:], temperature=0.7)
    mask = action[:, 1:]
    # Extreme values off the mask (ratio exp(1e4) would overflow) must not leak into the gradient.
    old = torch.where(mask.bool(), logps.detach() - 0.1, torch.full_like(logps, -1e4))
    adv = torch.where(
        mask.bool(), torch.linspace(-1.5, 2.0, logps.shape[1])[None], torch.full_like(logps, 1e6)
    )
    for mode in ("token-mean", "seq-mean-token-mean"):
        logits.grad = None
        loss, _ = grpo_loss(logps, old, adv, mask, mode=mode, epsilon_low=0.2, epsilon_high=0.28)
        loss.backward(retain_graph=True)
        grad = logits.grad[0]
        env = (mask[0] == 0).nonzero().flatten()
        assert torch.isfinite(grad).all()
        assert bool((grad[env] == 0).all()), "a masked position received gradient"
        assert bool((grad[-1] == 0).all())  # the last position predicts nothing
        trained = mask[0].nonzero().flatten()
        assert bool((grad[trained].abs().sum(-1) > 0).all()), "every trained position gets gradient"
