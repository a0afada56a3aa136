"""Splits and training subsets: disjoint, seeded, and independent of the input order.

Words are ordered by a keyed hash of (seed, word), and val, test, sft, rl take consecutive runs
of that order. The same word set and seed give the same splits; adding or removing a few words
moves only the words at the run boundaries, not the whole assignment.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping

from training.curation.config import SPLIT_NAMES, CurationConfig, curriculum_name

RL_BAND = "rl_band"


def hash_order(words: Iterable[str], seed: int, salt: str = "split") -> list[str]:
    def key(word: str) -> bytes:
        return hashlib.blake2b(f"{salt}:{seed}:{word}".encode(), digest_size=16).digest()

    return sorted(set(words), key=lambda w: (key(w), w))


def split_sizes(n: int, config: CurationConfig) -> dict[str, int]:
    """Words per split. Fractions: floor of f*n, the words left over (up to round(sum f * n))
    going to the splits with the largest remainders; counts: as given, refused if they need more
    than n."""
    values = config.split_values
    if config.split_by == "count":
        sizes = {s: int(v) for s, v in values.items()}
        if sum(sizes.values()) > n:
            raise ValueError(
                f"the splits need {sum(sizes.values())} words "
                f"({', '.join(f'{s}={k}' for s, k in sizes.items())}) but only {n} words are left"
            )
        return sizes
    exact = {s: v * n for s, v in values.items()}
    sizes = {s: math.floor(x + 1e-9) for s, x in exact.items()}
    target = min(n, round(sum(exact.values())))
    by_remainder = sorted(SPLIT_NAMES, key=lambda s: (-(exact[s] - sizes[s]), SPLIT_NAMES.index(s)))
    for s in by_remainder[: max(0, target - sum(sizes.values()))]:
        sizes[s] += 1
    return sizes


def assign_splits(words: Iterable[str], config: CurationConfig) -> dict[str, str]:
    """word -> "val" | "test" | "sft" | "rl" | "" (left over)."""
    order = hash_order(words, config.seed)
    sizes = split_sizes(len(order), config)
    out: dict[str, str] = {}
    at = 0
    for split in SPLIT_NAMES:
        for word in order[at : at + sizes[split]]:
            out[word] = split
        at += sizes[split]
    for word in order[at:]:
        out[word] = ""
    return out


def training_subsets(
    splits: Mapping[str, str], solve_rates: Mapping[str, float], config: CurationConfig
) -> dict[str, list[str]]:
    """word -> its subsets, for RL-split words:
    - rl_band: the first rl_band_size RL words (in a seeded hash order) whose solve rate is within
      [rl_band_low, rl_band_high] — neither too easy nor too hard;
    - curriculum_<pct>: every RL word whose solve rate is at least the threshold (nested: a higher
      threshold is a subset of a lower one)."""
    rl_words = [w for w, s in splits.items() if s == "rl"]
    out: dict[str, list[str]] = {w: [] for w in splits}
    in_band = [
        w
        for w in hash_order(rl_words, config.seed, salt=RL_BAND)
        if config.rl_band_low <= solve_rates[w] <= config.rl_band_high
    ]
    for word in in_band[: config.rl_band_size]:
        out[word].append(RL_BAND)
    for threshold in sorted(config.curriculum):
        name = curriculum_name(threshold)
        for word in rl_words:
            if solve_rates[word] >= threshold - 1e-12:
                out[word].append(name)
    return out


def subset_counts(subsets: Mapping[str, list[str]], config: CurationConfig) -> dict[str, int]:
    names = [RL_BAND, *[curriculum_name(t) for t in sorted(config.curriculum)]]
    return {name: sum(name in s for s in subsets.values()) for name in names}
