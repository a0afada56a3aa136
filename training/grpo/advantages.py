"""Rewards, group-normalised advantages and StarPO-S group filtering (no torch).

Per turn t (DESIGN.md §4): r_t = penalty_t + r_end + λ·max(ΔBelief_t, 0), where penalty_t are
the turn's reward parts except the win (the engine's: turn −0.05, invalid −5, repeated −1; and
`info_gain` = μ·bits when `add_info_gain` put it there), r_end is the win reward of a won game
(added to every turn, as in ΔBelief-RL) and ΔBelief_t is `turn.delta_belief`. The trajectory
return (StarPO) is Σ_t penalty_t + r_end + λ·Σ_t max(ΔBelief_t, 0).

A group is the G rollouts of one secret. Normalisation is (r − mean) / (std + ε) with the
unbiased std (TRL, verl); a group (or, per turn, a turn index) that only one rollout has is
given advantage 0: there is nothing to compare it with.
"""

from __future__ import annotations

import math
from typing import Hashable, Sequence

from games.kb.narrowing import game_bits
from games.types import Trajectory

EPSILON = 1e-6
INFO_GAIN = "info_gain"  # the reward part add_info_gain writes


def _delta(turn, belief_coef: float) -> float:
    if belief_coef == 0:
        return 0.0
    if turn.delta_belief is None:
        raise ValueError("ΔBelief is missing: roll out with a belief backend, or set belief_coef=0")
    return belief_coef * max(float(turn.delta_belief), 0.0)


def add_info_gain(trajectories: Sequence[Trajectory], model, coef: float) -> list[float]:
    """Shape every turn with μ·bits: `turn.reward["info_gain"]` = coef × the bits by which the
    turn narrows the knowledge base's consistent candidates (games.kb.narrowing; a win gains every
    remaining bit), and `turn.candidates_left` after it. Returns each game's total bits."""
    totals = []
    for traj in trajectories:
        bits = game_bits(model, traj.turns)
        for turn, (b, left) in zip(traj.turns, bits):
            turn.reward[INFO_GAIN] = coef * b
            turn.candidates_left = left
        totals.append(math.fsum(b for b, _ in bits))
    return totals


def end_reward(traj: Trajectory) -> float:
    """r_end: the win reward the engine gave (0 for a lost game)."""
    return float(sum(turn.reward.get("win", 0.0) for turn in traj.turns))


def turn_rewards(traj: Trajectory, *, belief_coef: float = 0.1) -> list[float]:
    """r_t for every turn of a played game."""
    r_end = end_reward(traj)
    return [sum(v for k, v in turn.reward.items() if k != "win") + r_end + _delta(turn, belief_coef)
            for turn in traj.turns]


def trajectory_return(traj: Trajectory, *, belief_coef: float = 0.0) -> float:
    """Σ_t penalty_t + r_end (+ λ·Σ_t max(ΔBelief_t, 0)): the engine's total reward when λ = 0."""
    return float(sum(turn.total_reward for turn in traj.turns) + sum(_delta(t, belief_coef) for t in traj.turns))


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and unbiased standard deviation (0 for fewer than two values)."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = math.fsum(values) / n
    if n < 2:
        return mean, 0.0
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))


def normalise(values: Sequence[float], *, scale: bool = True, epsilon: float = EPSILON) -> list[float]:
    """(v − mean) / (std + ε), or v − mean without `scale`; all zeros for fewer than two values."""
    if len(values) < 2:
        return [0.0] * len(values)
    mean, std = mean_std(values)
    return [(v - mean) / (std + epsilon) if scale else v - mean for v in values]


def _groups(keys: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    members: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        members.setdefault(key, []).append(i)
    return members


def trajectory_advantages(returns: Sequence[float], groups: Sequence[Hashable], *, scale: bool = True,
                          epsilon: float = EPSILON) -> list[float]:
    """StarPO: each rollout's return normalised over the rollouts of its group."""
    if len(returns) != len(groups):
        raise ValueError("one group key per return")
    out = [0.0] * len(returns)
    for members in _groups(groups).values():
        for i, a in zip(members, normalise([returns[i] for i in members], scale=scale, epsilon=epsilon)):
            out[i] = a
    return out


def turn_advantages(rewards: Sequence[Sequence[float]], groups: Sequence[Hashable], *, scale: bool = True,
                    epsilon: float = EPSILON) -> list[list[float]]:
    """ΔBelief/CIA: for each turn index t, r_t normalised over the group's rollouts that reached t."""
    if len(rewards) != len(groups):
        raise ValueError("one group key per reward list")
    out = [[0.0] * len(r) for r in rewards]
    for members in _groups(groups).values():
        for t in range(max((len(rewards[i]) for i in members), default=0)):
            reached = [i for i in members if len(rewards[i]) > t]
            for i, a in zip(reached, normalise([rewards[i][t] for i in reached], scale=scale, epsilon=epsilon)):
                out[i][t] = a
    return out


def group_stds(returns: Sequence[float], groups: Sequence[Hashable]) -> dict[Hashable, float]:
    """Each group's (unbiased) std of the trajectory return, in first-appearance order."""
    return {key: mean_std([returns[i] for i in members])[1] for key, members in _groups(groups).items()}


def groups_to_keep(stds: dict[Hashable, float], ratio: float) -> list[Hashable]:
    """StarPO-S: the top ⌊ratio·n⌋ groups (at least one) by reward std; ties go to the group that
    came first. Returned in their original order. ratio = 1 keeps every group."""
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    keys = list(stds)
    k = len(keys) if ratio >= 1 else max(1, math.floor(ratio * len(keys) + 1e-9))
    ranked = sorted(range(len(keys)), key=lambda i: (-stds[keys[i]], i))[:k]
    return [keys[i] for i in sorted(ranked)]
