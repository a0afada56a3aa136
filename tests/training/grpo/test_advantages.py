"""Rewards, advantages and StarPO-S filtering against values computed by hand."""

from __future__ import annotations

import math

import pytest

from games.types import Verdict
from tests.training.grpo.conftest import make_trajectory, make_turn
from training.grpo.advantages import (
    EPSILON, group_stds, groups_to_keep, trajectory_advantages, trajectory_return, turn_advantages, turn_rewards,
)

S2 = math.sqrt(2.0)


def test_turn_advantages_two_secrets_three_rollouts_of_different_lengths():
    # Secret a: rollouts of 3, 2 and 1 turns; secret b: 2, 4 and 1 turns.
    rewards = [[1.0, 0.0, 3.0], [3.0, 2.0], [2.0], [0.5, 0.5], [0.5, 0.5, 1.5, -0.5], [-1.0]]
    groups = ["a", "a", "a", "b", "b", "b"]
    adv = turn_advantages(rewards, groups)
    # a, t=0: [1, 3, 2] -> mean 2, unbiased std 1 -> [-1, 1, 0]
    # a, t=1: rollouts 1 and 2 reached it: [0, 2] -> mean 1, std sqrt(2) -> [-1/sqrt2, 1/sqrt2]
    # a, t=2: only rollout 1 reached it -> 0 (nothing to compare with)
    # b, t=0: [0.5, 0.5, -1] -> mean 0, std sqrt(0.75) -> [0.57735, 0.57735, -1.15470]
    # b, t=1: [0.5, 0.5] -> std 0 -> 0;  b, t=2 and t=3: only rollout 2 -> 0
    s = math.sqrt(0.75)
    expected = [
        [-1 / (1 + EPSILON), 0.0 - 1 / (S2 + EPSILON), 0.0],
        [1 / (1 + EPSILON), 1 / (S2 + EPSILON)],
        [0.0],
        [0.5 / (s + EPSILON), 0.0],
        [0.5 / (s + EPSILON), 0.0, 0.0, 0.0],
        [-1.0 / (s + EPSILON)],
    ]
    for got, want in zip(adv, expected):
        assert got == pytest.approx(want, abs=1e-12)
    assert adv[0][1] == pytest.approx(-0.7071064, abs=1e-6) and adv[3][0] == pytest.approx(0.5773496, abs=1e-6)
    # Without std scaling (Dr. GRPO) only the means are subtracted.
    plain = turn_advantages(rewards, groups, scale=False)
    assert plain[0] == [-1.0, -1.0, 0.0] and plain[1] == [1.0, 1.0] and plain[4] == [0.5, 0.0, 0.0, 0.0]


def test_trajectory_advantages_normalise_within_each_group():
    returns = [1.0, 3.0, 2.0, 2.0, -0.1, -0.1, 0.3, 0.3]
    groups = [0, 0, 0, 1, 1, 1, 2, 2]
    adv = trajectory_advantages(returns, groups)
    # group 1: mean 0.6, deviations [1.4, -0.7, -0.7], variance 2.94 / 2 = 1.47, std 1.212436
    std1 = math.sqrt(1.47)
    assert adv == pytest.approx([-1 / (1 + EPSILON), 1 / (1 + EPSILON), 0.0, 1.4 / (std1 + EPSILON),
                                 -0.7 / (std1 + EPSILON), -0.7 / (std1 + EPSILON), 0.0, 0.0], abs=1e-12)
    assert adv[3] == pytest.approx(1.1547005, abs=1e-6)
    assert trajectory_advantages([5.0], ["lonely"]) == [0.0]  # a group of one has nothing to compare with
    with pytest.raises(ValueError):
        trajectory_advantages([1.0, 2.0], [0])


def test_delta_belief_shaping_uses_positive_part_times_lambda_and_r_end_on_every_turn():
    won = make_trajectory("dog", [
        make_turn(0, Verdict.YES, delta_belief=0.8),
        make_turn(1, Verdict.INVALID, delta_belief=-0.3),
        make_turn(2, Verdict.REPEATED, delta_belief=0.0),
        make_turn(3, Verdict.FINISHED, delta_belief=2.5),
    ])
    # r_t = penalty_t + r_end + 0.1 * max(dB_t, 0), r_end = +2 on every turn of a won game:
    assert turn_rewards(won, belief_coef=0.1) == pytest.approx([-0.05 + 2 + 0.08, -5.05 + 2, -1.05 + 2, -0.05 + 2 + 0.25])
    assert turn_rewards(won, belief_coef=0.1) == pytest.approx([2.03, -3.05, 0.95, 2.20])
    assert turn_rewards(won, belief_coef=0.0) == pytest.approx([1.95, -3.05, 0.95, 1.95])
    # The return counts the win once: -0.05 - 5.05 - 1.05 + 1.95 = -4.2, plus 0.1 * (0.8 + 2.5) = 0.33.
    assert trajectory_return(won) == pytest.approx(-4.2)
    assert trajectory_return(won, belief_coef=0.1) == pytest.approx(-3.87)
    lost = make_trajectory("dog", [make_turn(0, Verdict.NO, delta_belief=-1.0), make_turn(1, Verdict.YES, 0.5)])
    assert turn_rewards(lost, belief_coef=0.1) == pytest.approx([-0.05, -0.05 + 0.05])  # no r_end, no negative ΔB
    assert turn_rewards(lost, belief_coef=0.5) == pytest.approx([-0.05, 0.2])
    unscored = make_trajectory("dog", [make_turn(0, Verdict.NO)])
    with pytest.raises(ValueError, match="ΔBelief is missing"):
        turn_rewards(unscored, belief_coef=0.1)
    assert turn_rewards(unscored, belief_coef=0.0) == [-0.05]


STDS = {0: 0.5, 1: 0.0, 2: 0.5, 3: 1.2, 4: 0.1, 5: 0.5, 6: 0.0, 7: 0.3}


@pytest.mark.parametrize("ratio, kept", [
    (0.25, [0, 3]),  # 2 of 8: the largest std (3), then the first of the tied 0.5s (0)
    (0.3, [0, 3]),  # floor(2.4) = 2
    (0.375, [0, 2, 3]),  # exactly 3: ties broken by order
    (0.5, [0, 2, 3, 5]),
    (0.1, [3]),  # floor(0.8) = 0, but at least one group is kept
    (1.0, list(range(8))),
])
def test_starpo_s_keeps_the_top_groups_by_reward_std(ratio, kept):
    assert groups_to_keep(STDS, ratio) == kept


def test_starpo_s_fraction_rounding_is_not_fooled_by_floating_point():
    stds = {g: float(g) for g in range(100)}
    assert 0.29 * 100 < 29  # 28.999999999999996: int() would keep 28 groups
    assert len(groups_to_keep(stds, 0.29)) == 29
    assert groups_to_keep(stds, 0.29) == list(range(71, 100))
    with pytest.raises(ValueError):
        groups_to_keep(stds, 0.0)


def test_group_stds_use_the_unbiased_std_of_the_return():
    stds = group_stds([1.0, 3.0, 2.0, 0.0, 0.0, 0.0], ["x", "x", "x", "y", "y", "y"])
    assert stds == {"x": pytest.approx(1.0), "y": 0.0}
    assert list(stds) == ["x", "y"]


def test_information_gain_shaping_by_hand():
    from games.kb import load_kb
    from games.kb.candidates import candidate_model
    from training.grpo.advantages import INFO_GAIN, add_info_gain

    model = candidate_model(load_kb(), ["dog", "cat", "car", "apple"])

    def asked(index, question, verdict):
        t = make_turn(index, verdict)
        t.question = question
        return t

    won = make_trajectory("dog", [asked(0, "Is it a kind of animal?", Verdict.YES),
                                  asked(1, "Is it a cat?", Verdict.NO), asked(2, "Is it a dog?", Verdict.FINISHED)])
    lost = make_trajectory("apple", [asked(0, "Is it a kind of vehicle?", Verdict.NO),
                                     asked(1, "Is it a car?", Verdict.NO)])  # car was ruled out already
    totals = add_info_gain([won, lost], model, 0.5)
    assert totals == pytest.approx([2.0, math.log2(4 / 3)])
    assert [t.reward[INFO_GAIN] for t in won.turns] == pytest.approx([0.5, 0.5, 0.0])
    assert [t.candidates_left for t in won.turns] == [2, 1, 0]
    assert [t.candidates_left for t in lost.turns] == [3, 3]
    # r_t = turn penalty + μ·bits + r_end (2 for the win, on every turn)
    assert turn_rewards(won, belief_coef=0.0) == pytest.approx([2.45, 2.45, 1.95])
    assert turn_rewards(lost, belief_coef=0.0) == pytest.approx([-0.05 + 0.5 * math.log2(4 / 3), -0.05])
    assert trajectory_return(won) == pytest.approx(3 * -0.05 + 2.0 + 1.0)
    assert trajectory_return(lost) == pytest.approx(2 * -0.05 + 0.5 * math.log2(4 / 3))
