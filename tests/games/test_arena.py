"""The arena's outcome rule, pairing and Bradley–Terry ratings, against hand-computed values."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from games.arena import TIE, A, B, battle_outcome, draw_pair, ratings


@pytest.mark.parametrize(
    ("a_won", "a_q", "b_won", "b_q", "expected"),
    [
        (True, 5, True, 7, A),  # fewer questions wins
        (True, 9, True, 4, B),
        (True, 20, False, 20, A),  # only one named it
        (False, 20, True, 20, B),
        (True, 6, True, 6, TIE),  # as many questions
        (False, 20, False, 20, TIE),  # both failed
        (False, 3, True, 19, B),  # a failure is never "fewer questions"
    ],
)
def test_battle_outcome(a_won, a_q, b_won, b_q, expected):
    assert battle_outcome(a_won, a_q, b_won, b_q) == expected


def by_name(rows):
    return {r.name: r for r in rows}


def test_three_wins_to_one_is_400_log10_3_apart():
    """Chatbot Arena's weights: a win counts 2, so 3 wins to 1 is odds 6:2 = 3, i.e. a rating
    gap of 400·log10(3) = 190.85, centred on 1000."""
    battles = [("x", "y", A), ("y", "x", B), ("x", "y", A), ("x", "y", B)]
    got = by_name(ratings(battles, rounds=0))
    gap = 400 * math.log10(3)
    assert got["x"].rating == pytest.approx(1000 + gap / 2, abs=0.2)
    assert got["y"].rating == pytest.approx(1000 - gap / 2, abs=0.2)
    assert (got["x"].wins, got["x"].losses, got["x"].ties) == (3, 1, 0)
    assert (got["y"].wins, got["y"].losses, got["y"].ties) == (1, 3, 0)


def test_a_tie_counts_one_win_for_each_side():
    """One win (weight 2) and one tie (1 each way): odds 3:1 again, 190.85 apart."""
    got = by_name(ratings([("x", "y", A), ("y", "x", TIE)], rounds=0))
    assert got["x"].rating - got["y"].rating == pytest.approx(400 * math.log10(3), abs=0.3)
    only_ties = by_name(ratings([("x", "y", TIE), ("y", "x", TIE)], rounds=0))
    assert only_ties["x"].rating == pytest.approx(1000, abs=0.01)
    assert only_ties["y"].rating == pytest.approx(1000, abs=0.01)


def test_never_winning_stays_finite_and_last():
    battles = [("x", "z", A)] * 10 + [("y", "z", A)] * 10 + [("x", "y", A), ("x", "y", B)] * 5
    got = ratings(battles, rounds=0)
    assert [r.name for r in got][-1] == "z"
    assert all(math.isfinite(r.rating) for r in got)
    assert by_name(got)["x"].rating == pytest.approx(by_name(got)["y"].rating, abs=1)


def test_bootstrap_interval_brackets_the_fit_and_is_seeded():
    rng = random.Random(1)
    battles = [("x", "y", rng.choice([A, A, B, TIE])) for _ in range(200)]
    first = by_name(ratings(battles, rounds=50, seed=3))
    again = by_name(ratings(battles, rounds=50, seed=3))
    assert first == again
    for r in first.values():
        assert r.lower < r.rating < r.upper
    assert first["x"].lower > first["y"].upper  # 2:1 wins over 200 battles separate them


def test_preliminary_below_the_minimum():
    battles = [("x", "y", A)] * 3 + [("x", "z", TIE)] * 30
    got = by_name(ratings(battles, rounds=0, min_battles=30))
    assert got["x"].preliminary is False  # 33 battles
    assert got["y"].preliminary is True  # 3
    assert got["z"].preliminary is False  # 30


def test_unknown_outcome_is_refused():
    with pytest.raises(ValueError, match="unknown battle outcome"):
        ratings([("x", "y", "draw")])


def test_pairing_balances_every_pair_and_side():
    names = ["g1", "g2", "g3", "g4"]
    rng = random.Random(0)
    meetings: Counter = Counter()
    sides: Counter = Counter()
    for _ in range(600):
        a, b = draw_pair(names, meetings, rng)
        assert a != b
        meetings[frozenset((a, b))] += 1
        sides[a] += 1
    assert sorted(meetings.values()) == [100] * 6  # 6 pairs, exactly equal
    assert all(120 <= n <= 180 for n in sides.values())  # side A about half the time


def test_pairing_needs_two_guessers():
    with pytest.raises(ValueError, match="at least two"):
        draw_pair(["only"], {}, random.Random(0))


def test_pairing_draws_only_allowed_pairs():
    rng = random.Random(0)
    allowed = {frozenset(("g1", "g2")), frozenset(("g2", "g3"))}
    drawn = {
        frozenset(draw_pair(["g1", "g2", "g3"], {}, rng, allowed.__contains__)) for _ in range(40)
    }
    assert drawn == allowed
    with pytest.raises(ValueError, match="no pair"):
        draw_pair(["g1", "g3"], {}, rng, allowed.__contains__)
