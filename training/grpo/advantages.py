"""Rewards, group-normalised advantages and StarPO-S group filtering (no torch).

The reward assembly of the ΔBelief-RL reference (bethgelab/delta-belief-rl, `train.py`'s reward
manager and `env/twenty_questions/reward.py`): a game of n turns gets

    score_t  = the turn's own reward parts: invalid −5, repeated −1 (and `unknown`, `info_gain`
               when used); a valid question 0
    r_end    = win (+2 for a won game) + turn_penalty · n   (−0.05 per turn; not for n = 1)
    elicit_t = max(ΔBelief_t, 0), 0 on the turn that finishes the game
    r_t      = score_t + r_end + λ · elicit_t                  (CIA, advantage=turn)
    return   = Σ_t score_t + r_end + λ · Σ_t elicit_t          (StarPO, advantage=trajectory)

and per-turn advantages (`compute_grpo_turn_advantage`) normalise each turn index over all G
rollouts of the secret, with a shorter game's missing turns counted as 0 (the reference's
zero-padded [G, max_turns] reward tensor). Today's earlier choices stay as named ablations, each a
config field whose default is the reference's: `penalty_at="turn"` (−0.05 in each turn's own
reward, where per-turn normalisation cancels it), `finishing_belief=True` (the winning turn keeps
its ΔBelief bonus) and `normalisation="reached"` (turn t normalised over the games that reached it).

Normalisation is (r − mean) / (std + ε) with the unbiased std (torch.std, as the reference); a
group of one gets 0 (the reference divides by a std of 1: with G ≥ 2, as configs require, it never
happens).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from games.kb.narrowing import game_bits
from games.types import Trajectory, Verdict

EPSILON = 1e-6
INFO_GAIN = "info_gain"  # the reward part add_info_gain writes
PENALTY_AT = ("end", "turn")
NORMALISATIONS = ("padded", "reached")
OWN_PARTS_EXCLUDED = ("win", "turn")  # the end-of-game reward's parts


@dataclass(frozen=True)
class RewardRule:
    """How a played game's reward parts become per-turn rewards (defaults: the reference's)."""

    belief_coef: float = 0.1  # λ
    penalty_at: str = "end"  # where the per-turn penalty goes: r_end (reference) or each turn
    finishing_belief: bool = False  # keep ΔBelief's bonus on the turn that wins

    def __post_init__(self) -> None:
        if self.penalty_at not in PENALTY_AT:
            raise ValueError(f"penalty_at must be one of {PENALTY_AT}")


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


def turn_scores(traj: Trajectory, rule: RewardRule = RewardRule()) -> list[float]:
    """score_t: each turn's own reward parts (the per-turn penalty too when penalty_at="turn")."""
    excluded = ("win",) if rule.penalty_at == "turn" else OWN_PARTS_EXCLUDED
    return [
        math.fsum(v for k, v in turn.reward.items() if k not in excluded) for turn in traj.turns
    ]


def end_reward(traj: Trajectory, rule: RewardRule = RewardRule()) -> float:
    """r_end: the win reward the engine gave (0 for a lost game), plus the per-turn penalties of
    a game of two or more turns when penalty_at="end" (the reference's `traj_len` × turns)."""
    win = math.fsum(turn.reward.get("win", 0.0) for turn in traj.turns)
    if rule.penalty_at == "end" and traj.n_turns > 1:
        win += math.fsum(turn.reward.get("turn", 0.0) for turn in traj.turns)
    return win


def belief_bonus(traj: Trajectory, rule: RewardRule = RewardRule()) -> list[float]:
    """λ · max(ΔBelief_t, 0) per turn; 0 on the finishing turn unless finishing_belief."""
    if rule.belief_coef == 0:
        return [0.0] * traj.n_turns
    out = []
    for turn in traj.turns:
        if turn.delta_belief is None:
            raise ValueError(
                "ΔBelief is missing: roll out with a belief backend, or set belief_coef=0"
            )
        finishing = turn.verdict is Verdict.FINISHED and not rule.finishing_belief
        out.append(0.0 if finishing else rule.belief_coef * max(float(turn.delta_belief), 0.0))
    return out


def turn_rewards(traj: Trajectory, rule: RewardRule = RewardRule()) -> list[float]:
    """r_t = score_t + r_end + λ · elicit_t for every turn of a played game."""
    r_end = end_reward(traj, rule)
    return [s + r_end + b for s, b in zip(turn_scores(traj, rule), belief_bonus(traj, rule))]


def trajectory_return(traj: Trajectory, rule: RewardRule = RewardRule(belief_coef=0.0)) -> float:
    """Σ_t score_t + r_end + λ · Σ_t elicit_t (the StarPO return; the engine's total with λ = 0,
    but for a one-turn game's turn penalty, which the reference leaves out)."""
    return (
        math.fsum(turn_scores(traj, rule))
        + end_reward(traj, rule)
        + math.fsum(belief_bonus(traj, rule))
    )


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and unbiased standard deviation (0 for fewer than two values)."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = math.fsum(values) / n
    if n < 2:
        return mean, 0.0
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))


def normalise(
    values: Sequence[float], *, scale: bool = True, epsilon: float = EPSILON
) -> list[float]:
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


def trajectory_advantages(
    returns: Sequence[float],
    groups: Sequence[Hashable],
    *,
    scale: bool = True,
    epsilon: float = EPSILON,
) -> list[float]:
    """StarPO: each rollout's return normalised over the rollouts of its group."""
    if len(returns) != len(groups):
        raise ValueError("one group key per return")
    out = [0.0] * len(returns)
    for members in _groups(groups).values():
        for i, a in zip(
            members, normalise([returns[i] for i in members], scale=scale, epsilon=epsilon)
        ):
            out[i] = a
    return out


def turn_advantages(
    rewards: Sequence[Sequence[float]],
    groups: Sequence[Hashable],
    *,
    scale: bool = True,
    epsilon: float = EPSILON,
    normalisation: str = "padded",
) -> list[list[float]]:
    """ΔBelief/CIA: for each turn index t, r_t normalised over the group's rollouts. `padded` (the
    reference): over every rollout, a game that ended before t counting 0; `reached` (ablation):
    over the rollouts that reached t."""
    if len(rewards) != len(groups):
        raise ValueError("one group key per reward list")
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation must be one of {NORMALISATIONS}")
    out = [[0.0] * len(r) for r in rewards]
    for members in _groups(groups).values():
        for t in range(max((len(rewards[i]) for i in members), default=0)):
            reached = [i for i in members if len(rewards[i]) > t]
            counted = members if normalisation == "padded" else reached
            values = [rewards[i][t] if len(rewards[i]) > t else 0.0 for i in counted]
            for i, a in zip(counted, normalise(values, scale=scale, epsilon=epsilon)):
                if len(rewards[i]) > t:
                    out[i][t] = a
    return out


def group_stds(returns: Sequence[float], groups: Sequence[Hashable]) -> dict[Hashable, float]:
    """Each group's (unbiased) std of the trajectory return, in first-appearance order."""
    return {
        key: mean_std([returns[i] for i in members])[1] for key, members in _groups(groups).items()
    }


def groups_to_keep(stds: dict[Hashable, float], ratio: float) -> list[Hashable]:
    """StarPO-S: the top ⌊ratio·n⌋ groups (at least one) by reward std; ties go to the group that
    came first. Returned in their original order. ratio = 1 keeps every group."""
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    keys = list(stds)
    k = len(keys) if ratio >= 1 else max(1, math.floor(ratio * len(keys) + 1e-9))
    ranked = sorted(range(len(keys)), key=lambda i: (-stds[keys[i]], i))[:k]
    return [keys[i] for i in sorted(ranked)]
