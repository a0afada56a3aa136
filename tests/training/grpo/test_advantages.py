"""Rewards, advantages and StarPO-S filtering against values computed by hand from the ΔBelief-RL
reference's formulas (train.py's reward manager, reward.py, compute_grpo_turn_advantage)."""

from __future__ import annotations

import math

import pytest

from games.engine import reward_parts
from games.types import GameConfig, Verdict
from tests.training.grpo.conftest import make_trajectory, make_turn
from training.grpo.advantages import (
    EPSILON,
    RewardRule,
    group_stds,
    groups_to_keep,
    trajectory_advantages,
    trajectory_return,
    turn_advantages,
    turn_rewards,
)

REACHED = {"normalisation": "reached"}

S2 = math.sqrt(2.0)


def test_reached_ablation_two_secrets_three_rollouts_of_different_lengths():
    # Secret a: rollouts of 3, 2 and 1 turns; secret b: 2, 4 and 1 turns.
    rewards = [[1.0, 0.0, 3.0], [3.0, 2.0], [2.0], [0.5, 0.5], [0.5, 0.5, 1.5, -0.5], [-1.0]]
    groups = ["a", "a", "a", "b", "b", "b"]
    adv = turn_advantages(rewards, groups, **REACHED)
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
    assert adv[0][1] == pytest.approx(-0.7071064, abs=1e-6) and adv[3][0] == pytest.approx(
        0.5773496, abs=1e-6
    )
    # Without std scaling (Dr. GRPO) only the means are subtracted.
    plain = turn_advantages(rewards, groups, scale=False, **REACHED)
    assert (
        plain[0] == [-1.0, -1.0, 0.0]
        and plain[1] == [1.0, 1.0]
        and plain[4] == [0.5, 0.0, 0.0, 0.0]
    )


def test_padded_normalisation_counts_a_game_that_ended_as_zero():
    """The reference's [G, max_turns] tensor: secret a's t=1 is [0, 2, 0] (the one-turn game
    padded), t=2 is [3, 0, 0]; every turn index is normalised over all three rollouts."""
    rewards = [[1.0, 0.0, 3.0], [3.0, 2.0], [2.0]]
    adv = turn_advantages(rewards, ["a", "a", "a"])
    std1 = math.sqrt(((0 - 2 / 3) ** 2 * 2 + (2 - 2 / 3) ** 2) / 2)  # 1.1547
    std2 = math.sqrt(((3 - 1) ** 2 + 2 * (0 - 1) ** 2) / 2)  # sqrt(3)
    assert adv[0] == pytest.approx(
        [-1 / (1 + EPSILON), -2 / 3 / (std1 + EPSILON), 2 / (std2 + EPSILON)]
    )
    assert adv[1] == pytest.approx([1 / (1 + EPSILON), (4 / 3) / (std1 + EPSILON)])
    assert adv[2] == pytest.approx([0.0])
    assert len(adv[2]) == 1  # padded turns get no advantage of their own


def game(secret, verdicts, deltas=None, turn_penalty=-0.05):
    config = GameConfig(turn_penalty=turn_penalty)
    turns = [make_turn(i, v, None if deltas is None else deltas[i]) for i, v in enumerate(verdicts)]
    for turn in turns:
        turn.reward = reward_parts(turn.verdict, config)
    return make_trajectory(secret, turns)


def test_three_wins_in_four_turns_and_a_loss_in_twenty_as_the_reference_computes():
    """r_t = score_t + r_end with r_end = 2 − 0.05·4 = 1.8 for the wins and −0.05·20 = −1.0 for the
    loss. Turns 0–3: [1.8, 1.8, 1.8, −1.0] → mean 1.1, std 1.4: wins +0.5, loss −1.5. Turns 4–19:
    [0, 0, 0, −1.0] → mean −0.25, std 0.5: the loss −1.5 (the ablation gives it 0)."""
    wins = [game("dog", [Verdict.NO] * 3 + [Verdict.FINISHED]) for _ in range(3)]
    loss = game("dog", [Verdict.NO] * 20)
    games = [*wins, loss]
    rewards = [turn_rewards(g, RewardRule(belief_coef=0.0)) for g in games]
    assert rewards[0] == pytest.approx([1.8] * 4) and rewards[3] == pytest.approx([-1.0] * 20)
    adv = turn_advantages(rewards, ["dog"] * 4)
    assert adv[0] == pytest.approx([0.5] * 4, abs=1e-5)
    assert adv[3][:4] == pytest.approx([-1.5] * 4, abs=1e-5) and adv[3][4:] == pytest.approx(
        [-1.5] * 16, abs=1e-5
    )
    reached = turn_advantages(rewards, ["dog"] * 4, **REACHED)
    assert reached[3][4:] == [0.0] * 16


def test_the_turn_penalty_counts_only_when_it_is_part_of_the_end_reward():
    """Penalty −0.05 vs −5.0 per turn: per-turn advantages differ when it is in r_end (the
    reference) and are identical when each turn carries its own and turn t is normalised over the
    games that reached it (the earlier assembly: the penalty cancels)."""

    def advantages(penalty, at, normalisation="padded"):
        games = [
            game("dog", [Verdict.NO, Verdict.FINISHED], turn_penalty=penalty),
            game("dog", [Verdict.NO] * 4, turn_penalty=penalty),
            game("dog", [Verdict.NO] * 3 + [Verdict.FINISHED], turn_penalty=penalty),
        ]
        rule = RewardRule(belief_coef=0.0, penalty_at=at)
        return turn_advantages(
            [turn_rewards(g, rule) for g in games], [0, 0, 0], normalisation=normalisation
        )

    assert advantages(-0.05, "turn", "reached") == advantages(-5.0, "turn", "reached")
    small, large = advantages(-0.05, "end"), advantages(-5.0, "end")
    assert abs(small[0][0] - large[0][0]) > 0.1  # the short win gains from a large penalty
    # r_end with −5.0: the 2-turn win 2 − 10 = −8, the loss −20, the 4-turn win 2 − 20 = −18
    rule = RewardRule(belief_coef=0.0)
    assert turn_rewards(game("dog", [Verdict.NO, Verdict.FINISHED], turn_penalty=-5.0), rule) == [
        -8.0,
        -8.0,
    ]
    one_turn = game(
        "dog", [Verdict.FINISHED]
    )  # the reference leaves the turn penalty out of one-turn games
    assert turn_rewards(one_turn, rule) == [2.0] and trajectory_return(one_turn) == 2.0
    assert turn_rewards(one_turn, RewardRule(belief_coef=0.0, penalty_at="turn")) == [1.95]


def test_trajectory_advantages_normalise_within_each_group():
    returns = [1.0, 3.0, 2.0, 2.0, -0.1, -0.1, 0.3, 0.3]
    groups = [0, 0, 0, 1, 1, 1, 2, 2]
    adv = trajectory_advantages(returns, groups)
    # group 1: mean 0.6, deviations [1.4, -0.7, -0.7], variance 2.94 / 2 = 1.47, std 1.212436
    std1 = math.sqrt(1.47)
    assert adv == pytest.approx(
        [
            -1 / (1 + EPSILON),
            1 / (1 + EPSILON),
            0.0,
            1.4 / (std1 + EPSILON),
            -0.7 / (std1 + EPSILON),
            -0.7 / (std1 + EPSILON),
            0.0,
            0.0,
        ],
        abs=1e-12,
    )
    assert adv[3] == pytest.approx(1.1547005, abs=1e-6)
    assert trajectory_advantages([5.0], ["lonely"]) == [
        0.0
    ]  # a group of one has nothing to compare with
    with pytest.raises(ValueError):
        trajectory_advantages([1.0, 2.0], [0])


def test_delta_belief_shaping_and_the_end_reward_on_every_turn():
    won = make_trajectory(
        "dog",
        [
            make_turn(0, Verdict.YES, delta_belief=0.8),
            make_turn(1, Verdict.INVALID, delta_belief=-0.3),
            make_turn(2, Verdict.REPEATED, delta_belief=0.0),
            make_turn(3, Verdict.FINISHED, delta_belief=2.5),
        ],
    )
    # score_t: 0, −5, −1, 0; r_end = 2 − 0.05·4 = 1.8; λ·max(ΔB, 0) = 0.08, 0, 0, and 0 on the
    # finishing turn (the reference zeroes it): r_t = score_t + 1.8 + bonus
    cia = RewardRule(belief_coef=0.1)
    assert turn_rewards(won, cia) == pytest.approx([1.88, -3.2, 0.8, 1.8])
    assert turn_rewards(won, RewardRule(belief_coef=0.0)) == pytest.approx([1.8, -3.2, 0.8, 1.8])
    keep = RewardRule(
        belief_coef=0.1, finishing_belief=True
    )  # the ablation keeps the winning turn's 0.25
    assert turn_rewards(won, keep) == pytest.approx([1.88, -3.2, 0.8, 2.05])
    old = RewardRule(
        belief_coef=0.1, penalty_at="turn", finishing_belief=True
    )  # the earlier assembly
    assert turn_rewards(won, old) == pytest.approx([2.03, -3.05, 0.95, 2.20])
    # The return counts the win once: −5 − 1 + 1.8 = −4.2, plus 0.1 · 0.8 with λ (not the
    # winning turn's).
    assert trajectory_return(won) == pytest.approx(-4.2)
    assert trajectory_return(won, cia) == pytest.approx(-4.12)
    lost = make_trajectory(
        "dog", [make_turn(0, Verdict.NO, delta_belief=-1.0), make_turn(1, Verdict.YES, 0.5)]
    )
    assert turn_rewards(lost, cia) == pytest.approx(
        [-0.1, -0.1 + 0.05]
    )  # r_end = −0.1; no negative ΔB
    assert turn_rewards(lost, RewardRule(belief_coef=0.5)) == pytest.approx([-0.1, 0.15])
    unscored = make_trajectory("dog", [make_turn(0, Verdict.NO)])
    with pytest.raises(ValueError, match="ΔBelief is missing"):
        turn_rewards(unscored, cia)
    assert turn_rewards(unscored, RewardRule(belief_coef=0.0)) == [0.0]  # one turn: no turn penalty


STDS = {0: 0.5, 1: 0.0, 2: 0.5, 3: 1.2, 4: 0.1, 5: 0.5, 6: 0.0, 7: 0.3}


@pytest.mark.parametrize(
    "ratio, kept",
    [
        (0.25, [0, 3]),  # 2 of 8: the largest std (3), then the first of the tied 0.5s (0)
        (0.3, [0, 3]),  # floor(2.4) = 2
        (0.375, [0, 2, 3]),  # exactly 3: ties broken by order
        (0.5, [0, 2, 3, 5]),
        (0.1, [3]),  # floor(0.8) = 0, but at least one group is kept
        (1.0, list(range(8))),
    ],
)
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

    won = make_trajectory(
        "dog",
        [
            asked(0, "Is it a kind of animal?", Verdict.YES),
            asked(1, "Is it a cat?", Verdict.NO),
            asked(2, "Is it a dog?", Verdict.FINISHED),
        ],
    )
    lost = make_trajectory(
        "apple",
        [asked(0, "Is it a kind of vehicle?", Verdict.NO), asked(1, "Is it a car?", Verdict.NO)],
    )  # car was ruled out already
    totals = add_info_gain([won, lost], model, 0.5)
    assert totals == pytest.approx([2.0, math.log2(4 / 3)])
    assert [t.reward[INFO_GAIN] for t in won.turns] == pytest.approx([0.5, 0.5, 0.0])
    assert [t.candidates_left for t in won.turns] == [2, 1, 0]
    assert [t.candidates_left for t in lost.turns] == [3, 3]
    # r_t = μ·bits + r_end (2 − 0.05·3 for the win, −0.05·2 for the loss, on every turn)
    plain = RewardRule(belief_coef=0.0)
    assert turn_rewards(won, plain) == pytest.approx([0.5 + 1.85, 0.5 + 1.85, 1.85])
    assert turn_rewards(lost, plain) == pytest.approx([0.5 * math.log2(4 / 3) - 0.1, -0.1])
    assert trajectory_return(won) == pytest.approx(3 * -0.05 + 2.0 + 1.0)
    assert trajectory_return(lost) == pytest.approx(2 * -0.05 + 0.5 * math.log2(4 / 3))
