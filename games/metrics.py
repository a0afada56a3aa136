"""Evaluation metrics over trajectories: mean@k with a 95% interval, pass@k, turns, error rates,
and success under the reported win rules (games.rules: `reference`, `strict`) whichever rule a
game was played under (`lemma` included)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from games import rules
from games.types import REPORTED_WIN_RULES, GameConfig, Trajectory, Verdict

Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = (
        0.0 if p <= 0 else max(0.0, centre - half)
    )  # exact bounds at the edges (no rounding below p)
    hi = 1.0 if p >= 1 else min(1.0, centre + half)
    return (lo, hi)


def mean_at_k_interval(per_word_rates: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """95% interval of the mean over words of per-word success rates (words are the sampling unit).

    The normal interval over words; where it is degenerate (every word alike, or one word) the
    Wilson interval over words is used, so an all-solved run still gets a non-zero width.
    """
    n = len(per_word_rates)
    if n == 0:
        return (0.0, 1.0)
    mean = math.fsum(per_word_rates) / n
    var = math.fsum((r - mean) ** 2 for r in per_word_rates) / (n - 1) if n > 1 else 0.0
    if var < 1e-12:
        return wilson_interval(mean * n, n, z)
    half = z * math.sqrt(var / n)
    return (max(0.0, mean - half), min(1.0, mean + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one word: n samples, c of them solved (Chen et al., 2021). Defined
    for 1 <= k <= n only: with fewer samples than k there is no unbiased estimate."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def won_under(
    rule: str,
    *,
    won: bool,
    played_rule: str,
    question: str | None,
    secret: str,
    config: GameConfig | None = None,
) -> bool:
    """Whether a game counts as a success under `rule`: it was won, and, when it was played under
    the other rule, its winning question (the last) also wins under `rule`. A won game whose
    winning question is not stored keeps its own outcome (there is nothing to re-judge)."""
    if not won:
        return False
    if played_rule == rule or question is None:
        return True
    return rules.wins(question, secret, rule, config)


def _won_under(traj: Trajectory, rule: str) -> bool:
    return won_under(
        rule,
        won=traj.won,
        played_rule=traj.config.win_rule,
        secret=traj.secret,
        config=traj.config,
        question=traj.turns[-1].question if traj.turns else None,
    )


@dataclass
class EvalSummary:
    n_games: int
    n_words: int
    k: int
    success_rate: float  # mean@k, under the rule each game was played under
    success_ci95: tuple[float, float]
    win_rule: str  # the rule the games were played under ("mixed" if they differ)
    strict_success_rate: (
        float  # mean@k counting only wins whose winning question wins under "strict"
    )
    strict_success_ci95: tuple[float, float]
    reference_success_rate: float  # the same under "reference"
    reference_success_ci95: tuple[float, float]
    pass_at_k: float
    mean_turns: float
    mean_turns_solved: float | None
    invalid_rate: float  # per turn
    repeated_rate: float
    unknown_rate: float

    def to_dict(self) -> dict:
        data = asdict(self)
        for key in ("success_ci95", "strict_success_ci95", "reference_success_ci95"):
            data[key] = list(getattr(self, key))
        return data


def summarise(trajectories: Iterable[Trajectory], k: int | None = None) -> EvalSummary:
    by_word: dict[str, list[bool]] = defaultdict(list)
    by_word_rule: dict[str, dict[str, list[bool]]] = {
        rule: defaultdict(list) for rule in REPORTED_WIN_RULES
    }
    turns, solved_turns, played_rules = [], [], set()
    counts = {Verdict.INVALID: 0, Verdict.REPEATED: 0, Verdict.UNKNOWN: 0}
    n_turns_total = 0
    for traj in trajectories:
        by_word[traj.secret].append(traj.won)
        for rule in REPORTED_WIN_RULES:
            by_word_rule[rule][traj.secret].append(_won_under(traj, rule))
        played_rules.add(traj.config.win_rule)
        turns.append(traj.n_turns)
        if traj.won:
            solved_turns.append(traj.n_turns)
        for turn in traj.turns:
            n_turns_total += 1
            if turn.verdict in counts:
                counts[turn.verdict] += 1
    n_games = len(turns)
    if n_games == 0:
        raise ValueError("no games to summarise")
    k = k or min(len(v) for v in by_word.values())
    rates = _word_rates(by_word)
    rule_rates = {rule: _word_rates(by_word_rule[rule]) for rule in REPORTED_WIN_RULES}
    return EvalSummary(
        n_games=n_games,
        n_words=len(by_word),
        k=k,
        success_rate=math.fsum(rates) / len(rates),
        success_ci95=mean_at_k_interval(rates),
        win_rule=played_rules.pop() if len(played_rules) == 1 else "mixed",
        strict_success_rate=math.fsum(rule_rates["strict"]) / len(rates),
        strict_success_ci95=mean_at_k_interval(rule_rates["strict"]),
        reference_success_rate=math.fsum(rule_rates["reference"]) / len(rates),
        reference_success_ci95=mean_at_k_interval(rule_rates["reference"]),
        pass_at_k=sum(pass_at_k(len(v), sum(v), min(k, len(v))) for v in by_word.values())
        / len(by_word),
        mean_turns=sum(turns) / n_games,
        mean_turns_solved=(sum(solved_turns) / len(solved_turns)) if solved_turns else None,
        invalid_rate=counts[Verdict.INVALID] / max(n_turns_total, 1),
        repeated_rate=counts[Verdict.REPEATED] / max(n_turns_total, 1),
        unknown_rate=counts[Verdict.UNKNOWN] / max(n_turns_total, 1),
    )


def _word_rates(by_word: dict[str, list[bool]]) -> list[float]:
    return [sum(v) / len(v) for v in by_word.values()]
