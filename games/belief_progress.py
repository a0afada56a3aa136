"""Does ΔBelief track progress? The diagnostic issue 32 asks for before reading any ordering.

ΔBelief-RL pays each turn λ·max(ΔBelief_t, 0), the rise in the guesser's log-probability of the
secret. That is credit for progress only if the rise goes with turns that narrow the secret down.
For games with ΔBelief filled (games.rollout) and the bits each turn gained (games.kb.narrowing:
`grounded_bits`, None where not measured) this reports:

- `corr`: Pearson's r of ΔBelief_t with bits_t over every turn that has both, and `by_turn`, the
  same per turn index (how it changes through a game);
- `delta_belief_when_gaining`: the mean ΔBelief of turns that gained more than half a bit;
- `relu_per_game`: mean Σ_t max(ΔBelief_t, 0), what the CIA bonus pays before λ, and
  `net_per_game`, mean Σ_t ΔBelief_t = log b_T − log b_0, what a game's belief really rose;
- `cancelling_share`: 1 − Σ_games max(net, 0) / Σ_games relu, the share of the paid rises that
  later falls cancel (0 when belief only rises, near 1 when it is noise).

Pure Python: no torch, no Django.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from games.types import Trajectory

GAINING_BITS = 0.5


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r, or None with fewer than 3 pairs or a constant side."""
    n = len(xs)
    if n < 3 or n != len(ys):
        return None
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    syy = math.fsum((y - my) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def belief_progress(
    games: Sequence[Trajectory], bits: Sequence[Sequence[float | None]]
) -> dict[str, Any]:
    """The diagnostic over `games` and, per game, the bits of each of its turns (same order)."""
    if len(games) != len(bits):
        raise ValueError("one list of turn bits per game")
    xs, ys, gaining = [], [], []
    per_turn: dict[int, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    relu, net = [], []
    for game, game_bits in zip(games, bits, strict=True):
        deltas = [t.delta_belief for t in game.turns if t.delta_belief is not None]
        if deltas:
            relu.append(math.fsum(max(d, 0.0) for d in deltas))
            net.append(math.fsum(deltas))
        for t, (turn, b) in enumerate(zip(game.turns, game_bits, strict=True)):
            if turn.delta_belief is None or b is None:
                continue
            xs.append(turn.delta_belief)
            ys.append(b)
            per_turn[t][0].append(turn.delta_belief)
            per_turn[t][1].append(b)
            if b > GAINING_BITS:
                gaining.append(turn.delta_belief)
    paid = math.fsum(relu)
    return {
        "turns": len(xs),
        "games": len(relu),
        "corr": _r(pearson(xs, ys)),
        "by_turn": {
            str(t): {"turns": len(d), "corr": _r(pearson(d, b))}
            for t, (d, b) in sorted(per_turn.items())
        },
        "delta_belief_when_gaining": _r(math.fsum(gaining) / len(gaining)) if gaining else None,
        "gaining_turns": len(gaining),
        "relu_per_game": _r(paid / len(relu)) if relu else None,
        "net_per_game": _r(math.fsum(net) / len(net)) if net else None,
        "cancelling_share": _r(1 - math.fsum(max(n, 0.0) for n in net) / paid)
        if paid > 0
        else None,
    }
