"""How far a game's answers narrow a candidate pool, by the knowledge base's account.

`consistent` is the set of pool words that agree with every yes/no answer so far (a word named
by a question answered no is ruled out as well). `turn_bits` is what one more turn gains: for a
yes/no question the KB can ground, log2 of how many times the consistent set shrinks; for a win,
every remaining bit (log2 of the set before it); anything else (invalid, repeated, a question
the KB cannot ground) gains nothing. A guess of a word the answers already ruled out, answered
no, gains nothing either. Summed over a game the bits are log2(pool) − log2(left at the end):
a potential-based shaping term (Ng et al., 1999) with the potential −log2(consistent words).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from games.types import Turn, Verdict


def consistent(model: Any, history: Sequence[Turn]) -> np.ndarray:
    """Pool candidates consistent with every yes/no answer so far (a CandidateModel's masks)."""
    mask = np.ones(len(model.words), dtype=bool)
    for turn in history:
        narrow(model, mask, turn)
    return mask


def narrow(model: Any, mask: np.ndarray, turn: Turn) -> np.ndarray:
    """Apply one turn's answer to `mask` in place (and return it)."""
    if turn.verdict in (Verdict.YES, Verdict.NO):
        masks = model.outcome_masks(turn.question)
        if masks is not None:
            yes, named = masks
            mask &= ~named & (yes if turn.verdict is Verdict.YES else ~yes)
    return mask


def turn_bits(model: Any, before: np.ndarray, turn: Turn) -> float:
    """Bits of information the turn gains over the consistent set `before` (not modified)."""
    left = max(int(before.sum()), 1)
    if turn.verdict is Verdict.FINISHED:
        return math.log2(left)
    if turn.verdict not in (Verdict.YES, Verdict.NO):
        return 0.0
    after = narrow(model, before.copy(), turn)
    return math.log2(left / max(int(after.sum()), 1))


def game_bits(model: Any, turns: Sequence[Turn]) -> list[tuple[float, int]]:
    """(bits gained, pool words still consistent) after each turn of a game; a won game ends
    with 0."""
    mask = np.ones(len(model.words), dtype=bool)
    out = []
    for turn in turns:
        bits = turn_bits(model, mask, turn)
        narrow(model, mask, turn)
        out.append((bits, 0 if turn.verdict is Verdict.FINISHED else int(mask.sum())))
    return out


def grounded_bits(model: Any, turns: Sequence[Turn]) -> list[float | None]:
    """`game_bits`' bits per turn, None for a yes/no answer to a question the knowledge base
    cannot ground (its 0 bits are unknown, not measured): what the belief diagnostic compares."""
    mask = np.ones(len(model.words), dtype=bool)
    out: list[float | None] = []
    for turn in turns:
        grounded = turn.verdict not in (Verdict.YES, Verdict.NO) or (
            model.outcome_masks(turn.question) is not None
        )
        bits = turn_bits(model, mask, turn)
        narrow(model, mask, turn)
        out.append(bits if grounded else None)
    return out
