"""Per-step rollout statistics and collapse warnings (RAGEN's "echo trap" signals).

Metric names follow TRL where it has one (`reward`, `reward_std`, `frac_reward_zero_std`,
`entropy`, `kl`, `clip_ratio/*`, `grad_norm`, `completions/mean_length`,
`completions/clipped_ratio`, `num_tokens`) and RAGEN for the in-group reward std
(`rollout/in_group_std`). `CollapseMonitor` warns when the in-group reward std or the entropy
falls below a fraction of its maximum over a recent window (RAGEN: reward variance drops tens of
steps before collapse) or the grad norm exceeds a multiple of its recent median (spikes mark
irreversible collapse). With validation on, it also warns when the greedy success on the fixed
validation secrets falls a set amount below its value before training: forgetting, which a
learning rate too high for the start model causes while reward std, entropy and grad norm stay
unremarkable.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Hashable, Sequence
from typing import Any

from games.types import Trajectory, Verdict
from training.grpo.advantages import group_stds, mean_std


def rollout_metrics(
    trajectories: Sequence[Trajectory], returns: Sequence[float], groups: Sequence[Hashable]
) -> dict[str, float]:
    """Reward, success, turn and verdict statistics of one step's rollouts (before filtering)."""
    stds = group_stds(returns, groups)
    zero = {k for k, s in stds.items() if s < 1e-8}
    turns = [t for traj in trajectories for t in traj.turns]
    n_turns = max(len(turns), 1)
    lengths = [len((t.extra or {}).get("token_ids") or []) for t in turns]
    clipped = [(t.extra or {}).get("finish_reason") == "length" for t in turns]
    mean, std = mean_std(returns)
    deltas = [t.delta_belief for t in turns if t.delta_belief is not None]
    out = {
        "reward": mean,
        "reward_std": std,
        "rollout/in_group_std": statistics.fmean(stds.values()) if stds else 0.0,
        "frac_reward_zero_std": sum(g in zero for g in groups) / max(len(groups), 1),
        "success_rate": sum(t.won for t in trajectories) / max(len(trajectories), 1),
        "mean_turns": statistics.fmean(t.n_turns for t in trajectories) if trajectories else 0.0,
        "invalid_rate": sum(t.verdict is Verdict.INVALID for t in turns) / n_turns,
        "repeated_rate": sum(t.verdict is Verdict.REPEATED for t in turns) / n_turns,
        "unknown_rate": sum(t.verdict is Verdict.UNKNOWN for t in turns) / n_turns,
        "valid_rate": sum(t.verdict in (Verdict.YES, Verdict.NO, Verdict.FINISHED) for t in turns)
        / n_turns,
        "completions/mean_length": statistics.fmean(lengths) if lengths else 0.0,
        "completions/clipped_ratio": sum(clipped) / n_turns,
    }
    if deltas:
        out["belief/delta_mean"] = statistics.fmean(deltas)
        out["belief/delta_positive_mean"] = statistics.fmean(max(d, 0.0) for d in deltas)
    return out


class CollapseMonitor:
    """Watches `rollout/in_group_std`, `entropy` and `grad_norm` step by step.

    `check(values)` compares each value with the previous `window` steps (needs at least
    `min_history` of them) and returns (metric flags, warning messages); then it records the
    values. Its state is a plain dict, saved in checkpoints so a resumed run keeps its history.
    """

    WATCHED = ("rollout/in_group_std", "entropy", "grad_norm")

    VALIDATION = "val/success_rate"

    def __init__(
        self,
        window: int = 10,
        drop_fraction: float = 0.25,
        spike_factor: float = 5.0,
        min_history: int = 3,
        val_drop: float = 0.15,
    ):
        self.window, self.drop_fraction, self.spike_factor = window, drop_fraction, spike_factor
        self.min_history = min(min_history, window)
        self.val_drop = val_drop
        self.history = {name: deque(maxlen=window) for name in self.WATCHED}
        self.val_baseline: float | None = None  # validation success before the first update

    def check(self, values: dict[str, float]) -> tuple[dict[str, float], list[str]]:
        flags: dict[str, float] = {}
        messages: list[str] = []
        for name, flag, label in (
            ("rollout/in_group_std", "warning/reward_std_drop", "Reward std within groups"),
            ("entropy", "warning/entropy_drop", "Policy entropy"),
        ):
            value, past = values.get(name), self.history[name]
            if value is None or not math.isfinite(value):
                continue
            peak = max(past) if len(past) >= self.min_history else None
            hit = peak is not None and peak > 1e-6 and value < self.drop_fraction * peak
            flags[flag] = float(hit)
            if hit:
                messages.append(
                    f"{label} fell to {value:.4g}, below {self.drop_fraction:.0%} "
                    f"of its maximum {peak:.4g} over the last {len(past)} steps. "
                    + (
                        "The rollouts of a secret are becoming alike, "
                        "so GRPO has little left to learn from: RAGEN sees this tens "
                        "of steps before a collapse. Consider a higher temperature, "
                        "StarPO-S filtering (rollout_filter_ratio) or a lower learning rate."
                        if name != "entropy"
                        else "The policy is becoming deterministic (repetitive questions); "
                        "exploration is drying up. Consider a higher temperature, "
                        "a KL penalty (beta) or a lower learning rate."
                    )
                )
        value, past = values.get("grad_norm"), self.history["grad_norm"]
        if value is not None and math.isfinite(value):
            median = statistics.median(past) if len(past) >= self.min_history else None
            hit = median is not None and median > 0 and value > self.spike_factor * median
            flags["warning/grad_norm_spike"] = float(hit)
            if hit:
                messages.append(
                    f"Gradient norm spiked to {value:.4g}, {value / median:.1f}× "
                    f"its median {median:.4g} over the last {len(past)} steps. "
                    "Grad-norm spikes mark collapse that training does not recover from "
                    "(RAGEN); compare the success rate with earlier steps and consider "
                    "resuming from an earlier checkpoint with a lower learning rate."
                )
        elif value is not None:
            flags["warning/grad_norm_spike"] = 1.0
            messages.append(
                f"Gradient norm is {value}: the update is "
                "numerically broken (inf/NaN); stop the run."
            )
        value = values.get(self.VALIDATION)
        if value is not None and self.val_baseline is None:
            self.val_baseline = float(value)
        elif value is not None:
            hit = value < self.val_baseline - self.val_drop
            flags["warning/val_success_drop"] = float(hit)
            if hit:
                messages.append(
                    f"Validation success fell to {value:.0%} from {self.val_baseline:.0%} "
                    f"before training (more than {self.val_drop:.0%} lower): "
                    "the policy is forgetting what the start model could do, which the reward std, "
                    "entropy and grad norm do not show. Consider a lower learning rate, "
                    "a KL penalty (beta) or LoRA, and compare with an earlier checkpoint."
                )
        for name in self.WATCHED:
            v = values.get(name)
            if v is not None and math.isfinite(v):
                self.history[name].append(float(v))
        return flags, messages

    def state(self) -> dict[str, list[float]]:
        state = {name: list(values) for name, values in self.history.items()}
        if self.val_baseline is not None:
            state[self.VALIDATION] = [self.val_baseline]
        return state

    def load(self, state: dict[str, list[float]] | None) -> None:
        for name, values in (state or {}).items():
            if name in self.history:
                self.history[name].extend(float(v) for v in values)
            elif name == self.VALIDATION and values:
                self.val_baseline = float(values[0])


def belief_metrics(trajectories: Sequence[Trajectory], model: Any) -> dict[str, float]:
    """Does ΔBelief track progress in this step's games (games.belief_progress over the
    knowledge base's candidate model `model`): the figures that are defined, as metrics."""
    from games.belief_progress import belief_progress
    from games.kb.narrowing import grounded_bits

    out = belief_progress(trajectories, [grounded_bits(model, t.turns) for t in trajectories])
    names = {
        "corr": "belief/progress_corr",
        "turns": "belief/grounded_turns",
        "delta_belief_when_gaining": "belief/delta_when_gaining",
        "relu_per_game": "belief/relu_per_game",
        "net_per_game": "belief/net_per_game",
        "cancelling_share": "belief/cancelling_share",
    }
    return {name: float(out[key]) for key, name in names.items() if out[key] is not None}
