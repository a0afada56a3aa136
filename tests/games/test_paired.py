"""Paired comparisons of two sets of games on the same secrets (games.paired)."""

from __future__ import annotations

import pytest

from games.paired import compare, per_secret
from games.types import Outcome, Trajectory, Turn, Verdict


def game(secret: str, won: bool, verdicts: list[Verdict]) -> Trajectory:
    turns = [Turn(i, f"q{i}?", v, v.value) for i, v in enumerate(verdicts)]
    return Trajectory(secret, 0, turns=turns, outcome=Outcome.WON if won else Outcome.LOST)


Y, N, R, BAD = Verdict.YES, Verdict.NO, Verdict.REPEATED, Verdict.INVALID


def test_per_secret_shares_are_of_that_secrets_questions():
    rows = per_secret(
        [game("cat", True, [Y, R]), game("cat", False, [N, N, BAD, R]), game("dog", False, [N])]
    )
    assert rows["cat"] == pytest.approx(
        {"won": 0.5, "valid": 0.5, "repeated": 2 / 6, "invalid": 1 / 6}
    )
    assert rows["dog"] == {"won": 0.0, "valid": 1.0, "repeated": 0.0, "invalid": 0.0}


def test_compare_is_b_minus_a_on_shared_secrets_with_an_interval():
    a = [game(w, False, [R, N]) for w in ("cat", "dog", "owl", "fig")] + [game("elm", True, [Y])]
    b = [game(w, w != "fig", [Y, N]) for w in ("cat", "dog", "owl", "fig")]
    out = compare(a, b, n_boot=2000)
    assert (out["words"], out["only_a"], out["only_b"]) == (4, 1, 0)
    assert out["won"]["a"] == 0.0 and out["won"]["b"] == 0.75 and out["won"]["difference"] == 0.75
    lo, hi = out["won"]["ci95"]
    assert 0.0 <= lo < 0.75 < hi <= 1.0  # resampling 4 secrets, 3 won and 1 lost
    assert out["repeated"]["difference"] == -0.5 and out["repeated"]["ci95"] == [-0.5, -0.5]
    assert out["valid"]["difference"] == 0.5


def test_compare_needs_a_shared_secret():
    with pytest.raises(ValueError, match="share no secret"):
        compare([game("cat", True, [Y])], [game("dog", True, [Y])])
