"""The paper's ordering in miniature: SFT < StarPO < CIA, each difference with a paired bootstrap
interval over test words and training seeds; the arms, and `run_arms`, which trains and evaluates
them seed by seed in either world (the miniature's pipeline and bench.learning.smol)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from games.paired import paired_bootstrap

ARMS = ("sft", "starpo", "cia")
GRPO_ARMS = {  # the paper's two GRPO runs: (advantage, λ); loss aggregation as the paper's for each
    "starpo": ("trajectory", 0.0),
    "cia": ("turn", 0.1),
}
PAIRS = {
    "starpo_minus_sft": ("starpo", "sft"),
    "cia_minus_starpo": ("cia", "starpo"),
    "cia_minus_sft": ("cia", "sft"),
}


def as_matrix(per_seed: Sequence[dict[str, float]], words: Sequence[str]) -> np.ndarray:
    """[seeds, words] success rates (mean@k of each word) in the order of `words`."""
    return np.array([[rates[w] for w in words] for rates in per_seed], dtype=np.float64)


def ordering(
    per_word: dict[str, list[dict[str, float]]],
    words: Sequence[str],
    seeds: Sequence[int],
    metric: str = "success",
) -> dict:
    """`arms`: each arm's success (mean over seeds of the mean over words) and per seed; `paired`:
    the three differences with their intervals (in the metric's units: fractions for success);
    `seeds`; `test_words`; `targets`: the issue's checks (meaningful for success)."""
    matrices = {arm: as_matrix(per_word[arm], words) for arm in ARMS}
    arms = {
        arm: {
            metric: round(float(m.mean()), 4),
            "per_seed": [round(float(r), 4) for r in m.mean(axis=1)],
        }
        for arm, m in matrices.items()
    }
    paired = {name: paired_bootstrap(matrices[a], matrices[b]) for name, (a, b) in PAIRS.items()}
    best = max(("starpo", "cia"), key=lambda arm: arms[arm][metric])
    return {
        "arms": arms,
        "paired": paired,
        "seeds": list(seeds),
        "test_words": len(words),
        "targets": {
            "cia_minus_starpo_ci_above_0": paired["cia_minus_starpo"]["ci95"][0] > 0,
            "starpo_minus_sft_ci_above_0": paired["starpo_minus_sft"]["ci95"][0] > 0,
            "best_grpo_at_least_sft_plus_0.05": arms[best][metric] >= arms["sft"][metric] + 0.05,
        },
    }


def orderings(runs: dict, words: dict[str, Sequence[str]], seeds: Sequence[int]) -> dict:
    """The results' four ordering objects over the seeds every arm completed: success on test
    (and strict, and validation) and bits gained on test, each over the words every run played."""

    def arms_ordered(split: str, per_word: str, **options) -> dict:
        scores = {arm: [runs[arm][s][split][per_word] for s in seeds] for arm in ARMS}
        played = [w for w in words[split] if all(w in r for rs in scores.values() for r in rs)]
        return ordering(scores, played, seeds, **options)

    out = {
        "ordering": arms_ordered("test", "per_word"),
        "ordering_strict": arms_ordered("test", "strict_per_word"),
        "ordering_val": arms_ordered("val", "per_word"),
        # strategy apart from naming: bits the answers gained about the secret
        "ordering_bits": arms_ordered("test", "bits_per_word", metric="bits"),
    }
    out["ordering_bits"].pop("targets")
    return out


def run_arms(
    stage: Callable,
    seeds: Sequence[int],
    words: dict[str, Sequence[str]],
    *,
    sft: Callable[[int], tuple[Any, dict]],
    grpo: Callable[..., tuple[Any, dict]],
    evaluate: Callable[[str, Any, int], dict],
    until: str | None,
    sft_stage: str,
) -> dict:
    """Both worlds' study, seed by seed: the SFT model, `sft(seed)` (the model and what was
    trained), then, unless `until` is that seed's SFT stage (`sft_stage` with the seed), each GRPO
    arm from it as the stage `{arm}-s{seed}`, `grpo(sft_model, arm, seed)`; each arm's run is its
    training and `evaluate(f"{arm}-s{seed}", model, seed)`. Stops after the seed `until` names
    (its SFT stage or `seed-N`). {"runs": {arm: {seed: run}}}, with the orderings over the seeds
    every arm completed."""
    runs: dict[str, dict] = {arm: {} for arm in ARMS}
    for seed in seeds:
        sft_model, sft_info = sft(seed)
        models = {"sft": (sft_model, sft_info)}
        stop_after_sft = sft_stage.format(seed=seed)
        if until != stop_after_sft:
            for arm in GRPO_ARMS:
                models[arm] = stage(f"{arm}-s{seed}", grpo, sft_model, arm, seed)
        for arm, (model, info) in models.items():
            runs[arm][seed] = {"training": info} | evaluate(f"{arm}-s{seed}", model, seed)
        if until in (stop_after_sft, f"seed-{seed}"):
            break
    out: dict[str, Any] = {"runs": runs}
    complete = [s for s in seeds if all(s in runs[arm] for arm in ARMS)]
    if complete:
        out |= orderings(runs, words, complete)
    return out
