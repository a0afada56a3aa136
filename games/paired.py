"""Paired comparisons: two sets of games on the same secrets, b − a per secret, with a bootstrap
interval over secrets (and seeds), so that a difference comes with how sure it is.

Numpy only (no Django, no torch).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from games.types import Trajectory, Verdict

METRICS = ("won", "valid", "repeated", "invalid")


def paired_bootstrap(a: np.ndarray, b: np.ndarray, *, n_boot: int = 4000, seed: int = 0) -> dict:
    """Mean of a − b over seeds and words ([seeds, words] arrays), with a 95% percentile interval
    from resampling words and seeds (with replacement, independently) and keeping each (seed,
    word) pair paired."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    n_seeds, n_words = diff.shape
    means = np.empty(n_boot)
    for i in range(n_boot):
        rows = rng.integers(0, n_seeds, n_seeds)
        cols = rng.integers(0, n_words, n_words)
        means[i] = diff[np.ix_(rows, cols)].mean()
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {
        "mean": round(float(diff.mean()), 4),
        "ci95": [round(float(lo), 4), round(float(hi), 4)],
    }


def per_secret(games: Iterable[Trajectory]) -> dict[str, dict[str, float]]:
    """Each secret's metrics over its games: won (the share of its games won, under each game's
    own rule), and of its questions the share valid, repeated and invalid."""
    won: dict[str, list[bool]] = defaultdict(list)
    verdicts: dict[str, list[Verdict]] = defaultdict(list)
    for game in games:
        won[game.secret].append(game.won)
        verdicts[game.secret].extend(t.verdict for t in game.turns)
    out = {}
    for secret, results in won.items():
        asked = verdicts[secret]
        repeated = sum(v == Verdict.REPEATED for v in asked) / max(len(asked), 1)
        invalid = sum(v == Verdict.INVALID for v in asked) / max(len(asked), 1)
        out[secret] = {
            "won": sum(results) / len(results),
            "valid": 1.0 - repeated - invalid,
            "repeated": repeated,
            "invalid": invalid,
        }
    return out


def compare(
    a: Iterable[Trajectory], b: Iterable[Trajectory], *, n_boot: int = 10_000, seed: int = 0
) -> dict:
    """b − a on the secrets both played: per metric each side's mean over those secrets and the
    paired difference with its 95% bootstrap interval over secrets."""
    left, right = per_secret(a), per_secret(b)
    words = sorted(set(left) & set(right))
    if not words:
        raise ValueError("the two sets of games share no secret")
    out: dict = {
        "words": len(words),
        "only_a": len(left) - len(words),
        "only_b": len(right) - len(words),
    }
    for metric in METRICS:
        xa = np.array([[left[w][metric] for w in words]])
        xb = np.array([[right[w][metric] for w in words]])
        diff = paired_bootstrap(xb, xa, n_boot=n_boot, seed=seed)
        out[metric] = {
            "a": round(float(xa.mean()), 4),
            "b": round(float(xb.mean()), 4),
            "difference": diff["mean"],
            "ci95": diff["ci95"],
        }
    return out
