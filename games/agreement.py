"""Inter-rater agreement and judge accuracy: pure numpy, no I/O.

Ratings are a units × categories count matrix (`counts[i, k]` = raters who put unit i in
category k), so units may have different numbers of raters (missing ratings). With a constant
number of raters the formulas are the textbook ones:

- Fleiss' κ (Fleiss 1971): (p_a − p_e) / (1 − p_e), p_e = Σ_k π_k².
- Gwet's AC1 (Gwet 2008; Handbook of Inter-Rater Reliability, 4th ed., 2014):
  p_e = Σ_k π_k (1 − π_k) / (q − 1); stable when one category dominates, where κ collapses
  (the "kappa paradox").
- Cohen's κ (Cohen 1960) for two raters, from their paired labels or a q × q table.

p_a averages, over units with at least two ratings, the share of agreeing rater pairs;
π_k averages each unit's category shares over all rated units (Gwet's treatment of missing
ratings, as in the irrCAC package). Intervals are percentile bootstraps over units (seeded).
Undefined values (e.g. κ when every rating falls in one category) are None, never NaN.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations

import numpy as np

from games.metrics import Z95, wilson_interval

ANSWERS = ("yes", "no")


@dataclass(frozen=True)
class Estimate:
    """A statistic with its interval; None where it is undefined."""

    value: float | None
    lo: float | None = None
    hi: float | None = None
    n: int = 0  # units (items) it was computed from

    def to_dict(self) -> dict:
        return asdict(self)


def _none(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


# -- counts ------------------------------------------------------------------------------------
def rating_counts(
    units: Iterable[Sequence[Hashable | None]], categories: Sequence[Hashable]
) -> np.ndarray:
    """Units × categories counts from each unit's ratings (None = missing)."""
    index = {c: k for k, c in enumerate(categories)}
    rows = []
    for ratings in units:
        row = np.zeros(len(categories))
        for r in ratings:
            if r is None:
                continue
            if r not in index:
                raise ValueError(f"rating {r!r} is not one of the categories {list(categories)}")
            row[index[r]] += 1
        rows.append(row)
    return np.array(rows, dtype=float).reshape(len(rows), len(categories))


def table_counts(table: Sequence[Sequence[float]]) -> np.ndarray:
    """Two raters' q × q contingency table (rows: rater A, columns: rater B) as unit counts."""
    table = np.asarray(table, dtype=float)
    q = table.shape[0]
    if table.shape != (q, q):
        raise ValueError("the contingency table must be square")
    rows = []
    for a in range(q):
        for b in range(q):
            row = np.zeros(q)
            row[a] += 1
            row[b] += 1
            rows.extend([row] * int(table[a, b]))
    return np.array(rows).reshape(len(rows), q)


# -- coefficients on a counts matrix (the batch versions take a stack of matrices) ----------------
def _parts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """p_a, π (categories) and the number of units with ≥ 2 ratings, batched over axis 0."""
    r = counts.sum(-1)
    pairs = r * (r - 1)
    multi = r >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        agree = np.where(multi, (counts * (counts - 1)).sum(-1) / np.where(multi, pairs, 1), 0.0)
        n_multi = multi.sum(-1)
        pa = np.where(n_multi > 0, agree.sum(-1) / np.maximum(n_multi, 1), np.nan)
        rated = r >= 1
        shares = np.where(rated[..., None], counts / np.where(rated, r, 1)[..., None], 0.0)
        pi = shares.sum(-2) / np.maximum(rated.sum(-1), 1)[..., None]
    return pa, pi, n_multi


def _fleiss(counts: np.ndarray) -> np.ndarray:
    pa, pi, _ = _parts(counts)
    pe = (pi**2).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1 - 1e-12, (pa - pe) / (1 - pe), np.nan)


def _ac1(counts: np.ndarray) -> np.ndarray:
    q = counts.shape[-1]
    if q < 2:
        raise ValueError("AC1 needs at least two categories")
    pa, pi, _ = _parts(counts)
    pe = (pi * (1 - pi)).sum(-1) / (q - 1)
    return (pa - pe) / (1 - pe)


def _agreement(counts: np.ndarray) -> np.ndarray:
    return _parts(counts)[0]


def percent_agreement(counts: np.ndarray) -> float | None:
    return _none(float(_agreement(np.asarray(counts, dtype=float))))


def fleiss_kappa(counts: np.ndarray) -> float | None:
    return _none(float(_fleiss(np.asarray(counts, dtype=float))))


def gwet_ac1(counts: np.ndarray) -> float | None:
    return _none(float(_ac1(np.asarray(counts, dtype=float))))


def cohen_kappa_table(table: Sequence[Sequence[float]]) -> float | None:
    """Cohen's κ from a q × q table: p_o = trace / n, p_e = Σ_k row_k · col_k / n²."""
    t = np.asarray(table, dtype=float)
    n = t.sum()
    if n == 0:
        return None
    po = np.trace(t) / n
    pe = float((t.sum(1) * t.sum(0)).sum() / n**2)
    return None if pe >= 1 - 1e-12 else float((po - pe) / (1 - pe))


def cohen_kappa(
    a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable] | None = None
) -> float | None:
    """Cohen's κ of two raters' labels on the same units, in the same order."""
    return cohen_kappa_table(confusion_table(a, b, categories))


def confusion_table(
    a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable] | None = None
) -> np.ndarray:
    if len(a) != len(b):
        raise ValueError("both raters must label the same units")
    cats = list(categories) if categories is not None else sorted(set(a) | set(b), key=str)
    index = {c: k for k, c in enumerate(cats)}
    table = np.zeros((len(cats), len(cats)))
    for x, y in zip(a, b):
        table[index[x], index[y]] += 1
    return table


# -- intervals ---------------------------------------------------------------------------------
def bootstrap(
    stat: Callable[[np.ndarray], np.ndarray],
    counts: np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Estimate:
    """The statistic on `counts` with a percentile interval from resampling units (vectorised:
    `stat` takes a (B, units, categories) stack and returns B values)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.shape[0]
    value = _none(float(stat(counts[None])[0])) if n else None
    if n < 2 or value is None:
        return Estimate(value, None, None, n)
    rng = np.random.default_rng(seed)
    draws = []
    for start in range(0, n_boot, 200):  # bounded memory: 200 resamples at a time
        idx = rng.integers(0, n, size=(min(200, n_boot - start), n))
        draws.append(stat(counts[idx]))
    reps = np.concatenate(draws)
    reps = reps[np.isfinite(reps)]
    if reps.size < n_boot / 2:  # mostly undefined (e.g. degenerate resamples): no honest interval
        return Estimate(value, None, None, n)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(reps, [alpha, 1 - alpha])
    return Estimate(value, float(min(lo, value)), float(max(hi, value)), n)


def wilson(successes: int, n: int, z: float = Z95) -> Estimate:
    if n <= 0:
        return Estimate(None, None, None, 0)
    return Estimate(successes / n, *wilson_interval(successes, n, z), n)


# -- reports -----------------------------------------------------------------------------------
Ratings = Mapping[Hashable, Mapping[Hashable, Hashable]]  # unit -> {rater: label}


@dataclass
class AgreementReport:
    categories: list
    n_units: int  # units with at least two ratings
    n_ratings: int
    percent_agreement: Estimate
    fleiss_kappa: Estimate
    gwet_ac1: Estimate
    label_shares: dict  # category -> share of all ratings
    raters: list[dict] = field(default_factory=list)
    pairs: list[dict] = field(default_factory=list)
    units: dict = field(
        default_factory=dict
    )  # unit -> {"agreement", "majority", "majority_share", "n"}

    def to_dict(self) -> dict:
        out = asdict(self)
        out["units"] = {str(k): v for k, v in self.units.items()}
        return out


def unit_agreement(labels: Sequence[Hashable]) -> dict:
    """Share of agreeing rater pairs in one unit, and its majority label (ties: none)."""
    n = len(labels)
    counts = Counter(labels)
    top = counts.most_common()
    majority = top[0][0] if top and (len(top) == 1 or top[0][1] > top[1][1]) else None
    pairs = n * (n - 1)
    agreement = sum(c * (c - 1) for c in counts.values()) / pairs if pairs else None
    return {
        "n": n,
        "agreement": agreement,
        "majority": majority,
        "majority_share": (top[0][1] / n) if top else None,
    }


def agreement_report(
    ratings: Ratings,
    categories: Sequence[Hashable],
    *,
    gold: Mapping[Hashable, Hashable] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    min_pair_units: int = 2,
) -> AgreementReport:
    """Overall coefficients with bootstrap intervals, per rater (agreement with the others and
    with gold) and per rater pair (Cohen's κ), and per unit (share of agreeing pairs). Every rated
    unit is resampled and counts in the category shares; only units with two or more ratings
    count in p_a (see the module docstring)."""
    rated = [list(r.values()) for r in ratings.values() if r]
    counts = rating_counts(
        rated, categories
    )  # single-rated units too: they count in the category shares π
    all_labels = [lab for labels in rated for lab in labels]
    total = len(all_labels)
    shares = {
        c: (sum(1 for x in all_labels if x == c) / total if total else 0.0) for c in categories
    }
    report = AgreementReport(
        categories=list(categories),
        n_units=sum(1 for labels in rated if len(labels) >= 2),
        n_ratings=total,
        percent_agreement=bootstrap(_agreement, counts, n_boot=n_boot, seed=seed),
        fleiss_kappa=bootstrap(_fleiss, counts, n_boot=n_boot, seed=seed),
        gwet_ac1=bootstrap(_ac1, counts, n_boot=n_boot, seed=seed),
        label_shares=shares,
    )
    report.units = {u: unit_agreement(list(r.values())) for u, r in ratings.items()}
    report.raters = _rater_rows(ratings, gold or {})
    report.pairs = _pair_rows(
        ratings, categories, n_boot=n_boot, seed=seed, min_units=min_pair_units
    )
    return report


def _rater_rows(ratings: Ratings, gold: Mapping[Hashable, Hashable]) -> list[dict]:
    agree, pairs, n, right, scored = (defaultdict(int) for _ in range(5))
    for unit, by_rater in ratings.items():
        for rater, label in by_rater.items():
            n[rater] += 1
            others = [lab for r, lab in by_rater.items() if r != rater]
            pairs[rater] += len(others)
            agree[rater] += sum(1 for lab in others if lab == label)
            if unit in gold and gold[unit]:
                scored[rater] += 1
                right[rater] += int(label == gold[unit])
    rows = []
    for rater in sorted(n, key=str):
        with_others = wilson(agree[rater], pairs[rater])
        with_gold = wilson(right[rater], scored[rater])
        rows.append(
            {
                "rater": rater,
                "n": n[rater],
                "pairs": pairs[rater],
                "agreement_with_others": with_others.to_dict(),
                "gold_n": scored[rater],
                "agreement_with_gold": with_gold.to_dict(),
            }
        )
    return rows


def _pair_rows(
    ratings: Ratings, categories, *, n_boot: int, seed: int, min_units: int
) -> list[dict]:
    shared: dict[tuple, list[tuple]] = defaultdict(list)
    for by_rater in ratings.values():
        for a, b in combinations(sorted(by_rater, key=str), 2):
            shared[(a, b)].append((by_rater[a], by_rater[b]))
    rows = []
    index = {c: k for k, c in enumerate(categories)}
    for (a, b), labels in sorted(shared.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        if len(labels) < min_units:
            continue
        coded = np.array([[index[x], index[y]] for x, y in labels])
        kappa = _bootstrap_pairs(coded, len(categories), n_boot=n_boot, seed=seed)
        rows.append(
            {
                "a": a,
                "b": b,
                "n": len(labels),
                "agreement": float(np.mean(coded[:, 0] == coded[:, 1])),
                "cohen_kappa": kappa.to_dict(),
            }
        )
    return rows


def _kappa_codes(codes: np.ndarray, q: int) -> np.ndarray:
    """Cohen's κ of a (B, n, 2) stack of coded label pairs."""
    n = codes.shape[1]
    onehot_a = np.eye(q)[codes[..., 0]]
    onehot_b = np.eye(q)[codes[..., 1]]
    po = (codes[..., 0] == codes[..., 1]).mean(-1)
    pe = (onehot_a.mean(1) * onehot_b.mean(1)).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (
            np.where(pe < 1 - 1e-12, (po - pe) / (1 - pe), np.nan)
            if n
            else np.full(codes.shape[0], np.nan)
        )


def _bootstrap_pairs(codes: np.ndarray, q: int, *, n_boot: int, seed: int) -> Estimate:
    value = _none(float(_kappa_codes(codes[None], q)[0]))
    n = len(codes)
    if value is None or n < 2:
        return Estimate(value, None, None, n)
    rng = np.random.default_rng(seed)
    reps = _kappa_codes(codes[rng.integers(0, n, size=(n_boot, n))], q)
    reps = reps[np.isfinite(reps)]
    if reps.size < n_boot / 2:
        return Estimate(value, None, None, n)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    return Estimate(value, float(min(lo, value)), float(max(hi, value)), n)


# -- judges against gold -----------------------------------------------------------------------
# Taxonomy of one judge verdict against a gold label (gold "unclear" is not scored):
OUTCOMES = {
    ("yes", "yes"): "true_yes",
    ("no", "no"): "true_no",
    ("yes", "no"): "false_yes",  # a wrong positive: the guesser keeps a wrong branch
    ("no", "yes"): "false_no",  # a wrong negative: the secret's branch is cut off
    ("invalid", "invalid"): "true_invalid",
}


def judge_outcome(verdict: str, gold: str) -> str | None:
    """One verdict's place in the taxonomy; None when gold is unclear (not scored)."""
    if gold not in ("yes", "no", "invalid"):
        return None
    if (verdict, gold) in OUTCOMES:
        return OUTCOMES[(verdict, gold)]
    if gold in ANSWERS:
        return "unrecognised"  # unknown/invalid (or anything else) on a valid question
    return "answered_invalid" if verdict in ANSWERS else "abstained_on_invalid"


TAXONOMY = (
    "true_yes",
    "true_no",
    "false_yes",
    "false_no",
    "unrecognised",
    "true_invalid",
    "answered_invalid",
    "abstained_on_invalid",
)


def judge_accuracy(pairs: Iterable[tuple[str, str]]) -> dict:
    """Accuracy (exact match with gold, Wilson interval), coverage (answered yes/no where gold is
    yes/no), yes/no accuracy among answered, and the confusion taxonomy counts."""
    counts = Counter()
    unclear = 0
    for verdict, gold in pairs:
        outcome = judge_outcome(verdict, gold)
        if outcome is None:
            unclear += 1
        else:
            counts[outcome] += 1
    n = sum(counts.values())
    correct = counts["true_yes"] + counts["true_no"] + counts["true_invalid"]
    valid = sum(counts[k] for k in ("true_yes", "true_no", "false_yes", "false_no", "unrecognised"))
    answered = valid - counts["unrecognised"]
    return {
        "n": n,
        "correct": correct,
        "accuracy": wilson(correct, n).to_dict(),
        "coverage": wilson(answered, valid).to_dict(),
        "answered_accuracy": wilson(counts["true_yes"] + counts["true_no"], answered).to_dict(),
        "taxonomy": {k: counts[k] for k in TAXONOMY},
        "gold_unclear": unclear,
    }
