"""The arena: two guessers ask about the same word, one person answers both, and ratings come from
the outcomes as Chatbot Arena computes them (Chiang et al., 2024, "Chatbot Arena").

- A battle's outcome: the guesser that names the word in fewer questions wins; both failing, or
  both naming it in as many questions, is a tie.
- Ratings: the Bradley–Terry maximum-likelihood fit of Chatbot Arena's `compute_mle_elo`, a
  logistic regression without intercept on +ln 10 / −ln 10 design rows, a win weighted 2 for the
  winner and a tie 1 for each side, reported as 400·β + 1000 (centred on 1000: the fit fixes
  only differences). Intervals: percentiles 2.5 and 97.5 of the fit over bootstrap resamples of
  the battles. One deviation, a config value: `ridge` (default 1e-6, a tiny L2 on β) keeps a
  guesser that never wins nor ties at a finite rating instead of minus infinity.
- Pairing: the pair that has met least so far (ties broken at random), sides drawn at random, so
  every pair meets about equally often whatever the order people come in.

Pure numpy/scipy: no Django, no torch.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_expit

A, B, TIE = "a", "b", "tie"
OUTCOMES = (A, B, TIE)
SCALE, BASE, INIT_RATING = 400.0, 10.0, 1000.0  # Chatbot Arena's Elo scale
BOOTSTRAP_ROUNDS = 100  # Chatbot Arena's notebook default
MIN_BATTLES = 30  # fewer battles than this for a guesser: its rating is preliminary


def battle_outcome(a_won: bool, a_questions: int, b_won: bool, b_questions: int) -> str:
    """A, B or TIE: fewer questions to name the word wins; both failing or equal is a tie."""
    if a_won and (not b_won or a_questions < b_questions):
        return A
    if b_won and (not a_won or b_questions < a_questions):
        return B
    return TIE


def draw_pair(
    guessers: Sequence[str],
    meetings: Mapping[frozenset, int],
    rng: random.Random,
    allowed: Callable[[frozenset], bool] | None = None,
) -> tuple[str, str]:
    """(side A, side B): a pair among those that met least, then the sides at random; `allowed`
    says which pairs may meet (default: all)."""
    names = sorted(set(guessers))
    if len(names) < 2:
        raise ValueError("an arena battle needs at least two guessers")
    pairs = [frozenset(p) for p in itertools.combinations(names, 2)]
    pairs = [p for p in pairs if allowed is None or allowed(p)]
    if not pairs:
        raise ValueError("no pair of these guessers may meet")
    fewest = min(meetings.get(p, 0) for p in pairs)
    pair = sorted(rng.choice([p for p in pairs if meetings.get(p, 0) == fewest]))
    rng.shuffle(pair)
    return pair[0], pair[1]


@dataclass(frozen=True)
class Rating:
    name: str
    rating: float
    lower: float  # 95% bootstrap interval
    upper: float
    battles: int
    wins: int
    losses: int
    ties: int
    preliminary: bool  # fewer than MIN_BATTLES battles

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


Battle = tuple[str, str, str]  # (guesser on side A, guesser on side B, outcome)


def _cell_counts(battles: Sequence[Battle], index: Mapping[str, int]) -> np.ndarray:
    """counts[i, j, o]: battles with i on side A, j on side B and outcome o (A, B, TIE)."""
    counts = np.zeros((len(index), len(index), 3))
    for a, b, outcome in battles:
        counts[index[a], index[b], OUTCOMES.index(outcome)] += 1
    return counts


def _fit(counts: np.ndarray, ridge: float) -> np.ndarray:
    """Bradley–Terry β (natural-log units of BASE) from outcome counts, Chatbot Arena's weights."""
    n = counts.shape[0]
    wins = 2 * counts[:, :, 0] + 2 * counts[:, :, 1].T  # i beat j, on either side
    ties = counts[:, :, 2] + counts[:, :, 2].T
    weight = wins + ties  # row (i over j) with label 1: its weight
    i, j = np.nonzero(np.triu(weight + weight.T, 1))  # pairs that met
    w_ij, w_ji = weight[i, j], weight[j, i]
    ln_base = math.log(BASE)

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        z = ln_base * (beta[i] - beta[j])
        value = -(w_ij * log_expit(z) + w_ji * log_expit(-z)).sum() + ridge * beta @ beta
        dz = -(w_ij * np.exp(log_expit(-z)) - w_ji * np.exp(log_expit(z))) * ln_base
        grad = np.zeros(n)
        np.add.at(grad, i, dz)
        np.add.at(grad, j, -dz)
        return value, grad + 2 * ridge * beta

    result = minimize(loss, np.zeros(n), jac=True, method="L-BFGS-B", options={"gtol": 1e-10})
    return result.x - result.x.mean()


def ratings(
    battles: Sequence[Battle],
    *,
    rounds: int = BOOTSTRAP_ROUNDS,
    ridge: float = 1e-6,
    min_battles: int = MIN_BATTLES,
    seed: int = 0,
) -> list[Rating]:
    """Every guesser's rating with its 95% bootstrap interval, best first."""
    battles = [b for b in battles if b[0] != b[1]]
    for _, _, outcome in battles:
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown battle outcome {outcome!r}; use one of {OUTCOMES}")
    names = sorted({n for a, b, _ in battles for n in (a, b)})
    if not names:
        return []
    index = {n: k for k, n in enumerate(names)}
    counts = _cell_counts(battles, index)
    point = _fit(counts, ridge)
    total = counts.sum()
    probabilities = (counts / total).ravel()
    rng = np.random.default_rng(seed)
    samples = np.array(
        [
            _fit(rng.multinomial(int(total), probabilities).reshape(counts.shape), ridge)
            for _ in range(rounds)
        ]
    ).reshape(rounds, len(names))
    low, high = np.percentile(samples, [2.5, 97.5], axis=0) if rounds else (point, point)
    tally: dict[str, Counter] = {n: Counter() for n in names}
    for a, b, outcome in battles:
        tally[a][{A: "wins", B: "losses", TIE: "ties"}[outcome]] += 1
        tally[b][{A: "losses", B: "wins", TIE: "ties"}[outcome]] += 1
    out = []
    for name, k in index.items():
        played = sum(tally[name].values())
        out.append(
            Rating(
                name=name,
                rating=round(float(SCALE * point[k] + INIT_RATING), 1),
                lower=round(float(SCALE * low[k] + INIT_RATING), 1),
                upper=round(float(SCALE * high[k] + INIT_RATING), 1),
                battles=played,
                wins=tally[name]["wins"],
                losses=tally[name]["losses"],
                ties=tally[name]["ties"],
                preliminary=played < min_battles,
            )
        )
    return sorted(out, key=lambda r: -r.rating)
