import math

import pytest

from games.metrics import mean_at_k_interval, pass_at_k, summarise, wilson_interval, won_under
from games.types import GameConfig, Outcome, Trajectory, Turn, Verdict


def traj(secret, won, n_turns, bad=None):
    turns = [
        Turn(index=i, question="q?", verdict=(bad if bad and i == 0 else Verdict.NO), feedback="")
        for i in range(n_turns)
    ]
    return Trajectory(
        secret=secret, seed=0, turns=turns, outcome=Outcome.WON if won else Outcome.LOST
    )


def test_pass_at_k_matches_hand_computation():
    # n=4 samples, c=1 solved, k=2: 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 3, 2) == 1.0
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)
    assert pass_at_k(2, 1, 2) == 1.0  # k = n: one of the two samples won
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)  # fewer samples than k: undefined, not 1.0


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
    games = [
        traj("a", True, 4),
        traj("a", False, 20, Verdict.INVALID),
        traj("b", True, 10, Verdict.REPEATED),
        traj("b", True, 6),
    ]
    s = summarise(games, k=2)
    assert s.n_games == 4 and s.n_words == 2 and s.k == 2
    assert s.success_rate == pytest.approx((0.5 + 1.0) / 2)
    assert s.pass_at_k == pytest.approx(1.0)
    assert s.mean_turns == pytest.approx(40 / 4)
    assert s.mean_turns_solved == pytest.approx(20 / 3)
    assert s.invalid_rate == pytest.approx(1 / 40) and s.repeated_rate == pytest.approx(1 / 40)
    with pytest.raises(ValueError):
        summarise([])


def won_with(secret, question, rule="reference"):
    turns = [Turn(0, "Is it alive?", Verdict.YES, ""), Turn(1, question, Verdict.FINISHED, "")]
    return Trajectory(
        secret=secret, seed=0, config=GameConfig(win_rule=rule), turns=turns, outcome=Outcome.WON
    )


def test_summarise_reports_success_under_both_win_rules():
    games = [
        won_with("city", "Does it have a city center?"),
        won_with("city", "Is it a city?"),
        won_with("rowboat", "Is it a rowboat?"),
        traj("rowboat", False, 20),
    ]
    s = summarise(games, k=2)
    assert s.win_rule == "reference"
    assert s.success_rate == s.reference_success_rate == pytest.approx((1 + 0.5) / 2)
    # city: the first win only mentions the word, so 1 of 2 games is a strict success;
    # rowboat: 1 of 2
    assert s.strict_success_rate == pytest.approx((0.5 + 0.5) / 2)
    assert tuple(s.strict_success_ci95) == pytest.approx(mean_at_k_interval([0.5, 0.5]))
    data = s.to_dict()
    assert (
        data["strict_success_ci95"] == list(s.strict_success_ci95)
        and data["win_rule"] == "reference"
    )

    # a game won under strict is a reference success when its winning question wins under reference
    strict = summarise(
        [
            won_with("couch", "Is it a sofa?", "strict"),
            won_with("couch", "Is it a couch?", "strict"),
        ]
    )
    assert strict.win_rule == "strict" and strict.success_rate == strict.strict_success_rate == 1.0
    assert strict.reference_success_rate == 0.5
    assert summarise([*games, won_with("couch", "Is it a couch?", "strict")]).win_rule == "mixed"


def test_won_under():
    assert not won_under(
        "strict", won=False, played_rule="reference", question="Is it a dog?", secret="dog"
    )
    assert won_under(
        "strict", won=True, played_rule="reference", question="Is it a dog?", secret="dog"
    )
    assert not won_under(
        "strict", won=True, played_rule="reference", question="Is it like a dog?", secret="dog"
    )
    assert won_under(
        "reference", won=True, played_rule="reference", question="anything", secret="dog"
    )
    assert won_under(
        "strict", won=True, played_rule="reference", question=None, secret="dog"
    )  # nothing to re-judge
