"""The ΔBelief diagnostic (games.belief_progress) against numbers worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from games.belief_progress import belief_progress, pearson
from games.kb import load_kb
from games.kb.candidates import candidate_model
from games.kb.narrowing import grounded_bits
from games.types import GameConfig, Trajectory, Turn, Verdict


def game(deltas, verdicts=None):
    turns = [
        Turn(index=i, question=f"Q{i}?", verdict=(verdicts or {}).get(i, Verdict.NO), feedback="")
        for i in range(len(deltas))
    ]
    for turn, d in zip(turns, deltas, strict=True):
        turn.delta_belief = d
    return Trajectory(secret="dog", seed=0, config=GameConfig(), turns=turns)


def test_the_diagnostic_by_hand():
    games = [game([0.5, -0.3, 0.2]), game([-0.1, 0.4])]
    bits = [[1.0, 0.0, 2.0], [0.2, None]]  # the last turn not measured: left out of the pairs
    out = belief_progress(games, bits)
    pairs = [(0.5, 1.0), (-0.3, 0.0), (0.2, 2.0), (-0.1, 0.2)]
    assert out["turns"] == 4 and out["games"] == 2
    assert out["corr"] == pytest.approx(np.corrcoef(*zip(*pairs))[0, 1], abs=1e-4)
    assert out["by_turn"]["0"] == {"turns": 2, "corr": None}  # two pairs: no r
    assert out["delta_belief_when_gaining"] == pytest.approx((0.5 + 0.2) / 2)
    assert out["gaining_turns"] == 2
    assert out["relu_per_game"] == pytest.approx((0.7 + 0.4) / 2)  # every turn's rise is paid
    assert out["net_per_game"] == pytest.approx((0.4 + 0.3) / 2)
    assert out["cancelling_share"] == pytest.approx(1 - 0.7 / 1.1, abs=1e-4)


def test_noise_cancels_and_progress_does_not():
    rising = belief_progress([game([0.3, 0.3, 0.3])], [[1.0, 1.2, 0.9]])
    assert rising["cancelling_share"] == 0 and rising["relu_per_game"] == pytest.approx(0.9)
    noisy = belief_progress([game([0.5, -0.5, 0.5, -0.5])], [[1.0, 1.0, 1.0, 1.0]])
    assert noisy["cancelling_share"] == 1 and noisy["corr"] is None  # bits are constant


def test_pearson_edge_cases():
    assert pearson([1, 2], [1, 2]) is None
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        belief_progress([game([0.1])], [])


def test_grounded_bits_on_a_small_pool():
    model = candidate_model(load_kb(), ["dog", "cat", "apple", "hammer"])
    turns = [
        Turn(index=0, question="Is it an animal?", verdict=Verdict.YES, feedback=""),
        Turn(index=1, question="Does it sparkle with quiet joy?", verdict=Verdict.NO, feedback=""),
        Turn(index=2, question="Is it a dog?", verdict=Verdict.FINISHED, feedback=""),
    ]
    bits = grounded_bits(model, turns)
    assert bits[0] == pytest.approx(1.0)  # 4 candidates -> dog, cat
    assert bits[1] is None  # the KB cannot ground it: not measured
    assert bits[2] == pytest.approx(math.log2(2))  # the win gains what was left
