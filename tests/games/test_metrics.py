import math

import pytest

from games.metrics import mean_at_k_interval, pass_at_k, summarise, wilson_interval
from games.types import Outcome, Trajectory, Turn, Verdict


def traj(secret, won, n_turns, bad=None):
    turns = [Turn(index=i, question="q?", verdict=(bad if bad and i == 0 else Verdict.NO), feedback="") for i in range(n_turns)]
    return Trajectory(secret=secret, seed=0, turns=turns, outcome=Outcome.WON if won else Outcome.LOST)


def test_pass_at_k_matches_hand_computation():
    # n=4 samples, c=1 solved, k=2: 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 3, 2) == 1.0
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)


def test_mean_at_k_interval_over_words():
    lo, hi = mean_at_k_interval([1.0, 0.5, 0.0, 0.5])
    sd = math.sqrt(((0.5) ** 2 * 2) / 3)
    assert (hi - lo) / 2 == pytest.approx(1.959963984540054 * sd / 2)
    lo, hi = mean_at_k_interval([1.0, 1.0, 1.0])  # degenerate: Wilson, still has width
    assert hi == 1.0 and lo < 1.0


def test_summarise_counts_everything():
    games = [traj("a", True, 4), traj("a", False, 20, Verdict.INVALID), traj("b", True, 10, Verdict.REPEATED),
             traj("b", True, 6)]
    s = summarise(games, k=2)
    assert s.n_games == 4 and s.n_words == 2 and s.k == 2
    assert s.success_rate == pytest.approx((0.5 + 1.0) / 2)
    assert s.pass_at_k == pytest.approx(1.0)
    assert s.mean_turns == pytest.approx(40 / 4)
    assert s.mean_turns_solved == pytest.approx(20 / 3)
    assert s.invalid_rate == pytest.approx(1 / 40) and s.repeated_rate == pytest.approx(1 / 40)
    with pytest.raises(ValueError):
        summarise([])
