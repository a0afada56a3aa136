"""The Rasch fit behind the ability leaderboard: hand-checkable cases, linking, recovery, speed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from games.rating import DEFAULT_RIDGE, Z95, rasch_fit, theta_interval


def _cells(table: dict[tuple[str, str], tuple[int, int]]) -> list[tuple[str, str, bool]]:
    """{(player, item): (wins, plays)} -> responses."""
    out = []
    for (player, item), (wins, plays) in table.items():
        out += [(player, item, True)] * wins + [(player, item, False)] * (plays - wins)
    return out


SYMMETRIC = _cells({("A", "X"): (3, 4), ("A", "Y"): (2, 4), ("B", "X"): (2, 4), ("B", "Y"): (1, 4)})


def test_symmetric_two_by_two_matches_the_hand_computed_mle():
    # Row/column totals are sufficient: A and X 5/8, B and Y 3/8. By symmetry theta_A = -theta_B = t
    # and b_X = -b_Y = -t, so A's score equation 4σ(2t) + 4σ(0) = 5 gives σ(2t) = 3/4, t = ln(3)/2.
    fit = rasch_fit(SYMMETRIC, ridge=0.0)
    t = math.log(3) / 2
    assert fit.converged
    assert fit.ability("A")[0] == pytest.approx(t, abs=1e-6)
    assert fit.ability("B")[0] == pytest.approx(-t, abs=1e-6)
    assert fit.difficulty("X")[0] == pytest.approx(-t, abs=1e-6)
    assert fit.difficulty("Y")[0] == pytest.approx(t, abs=1e-6)
    assert fit.p_solve("A", "X") == pytest.approx(0.75, abs=1e-6)
    # standard error by hand: information of A = 4·(3/4·1/4) + 4·(1/2·1/2) = 1.75
    assert fit.ability("A")[1] == pytest.approx(1 / math.sqrt(1.75), abs=1e-6)


def test_ridge_keeps_the_symmetry_and_shrinks_towards_zero():
    fit = rasch_fit(SYMMETRIC, ridge=1.0)
    theta_a, theta_b = fit.ability("A")[0], fit.ability("B")[0]
    assert theta_a == pytest.approx(-theta_b, abs=1e-9)
    assert fit.difficulty("X")[0] == pytest.approx(-fit.difficulty("Y")[0], abs=1e-9)
    assert 0 < theta_a < math.log(3) / 2 - 0.05
    assert abs(fit.b.sum()) < 1e-9  # the scale is fixed by centring the difficulties


def test_solving_more_of_the_same_words_ranks_higher():
    words = [f"w{i}" for i in range(6)]
    responses = []
    for player, solved in (("weak", 1), ("middle", 3), ("strong", 5)):
        responses += [(player, w, i < solved) for i, w in enumerate(words)]
    fit = rasch_fit(responses)
    weak, middle, strong = (fit.ability(p)[0] for p in ("weak", "middle", "strong"))
    assert weak < middle < strong
    # and the word nobody solved is the hardest, the one everybody solved the easiest
    difficulties = [fit.difficulty(w)[0] for w in words]
    assert difficulties == sorted(difficulties)


def test_perfect_and_zero_scores_stay_finite_and_ordered():
    responses = [("all", w, True) for w in "abcd"] + [("none", w, False) for w in "abcd"]
    responses += [("half", w, w in "ab") for w in "abcd"]
    fit = rasch_fit(responses)
    assert fit.converged
    assert np.all(np.isfinite(fit.theta)) and np.all(np.isfinite(fit.theta_se))
    assert fit.ability("none")[0] < fit.ability("half")[0] < fit.ability("all")[0]


def test_disjoint_word_sets_are_linked_through_a_third_player():
    # A played only hard words and won half; B played only easy words and won 60%: by raw win rate
    # B looks better. C played every word many times: rarely solves the hard ones, nearly always
    # the easy ones, which tells the fit how hard each set is. A must come out above B.
    hard, easy = [f"hard{i}" for i in range(10)], [f"easy{i}" for i in range(10)]
    responses = [("A", w, i < 5) for i, w in enumerate(hard)] + [
        ("B", w, i < 6) for i, w in enumerate(easy)
    ]
    for rep in range(10):
        responses += [("C", w, rep == 0) for w in hard] + [("C", w, rep != 0) for w in easy]
    fit = rasch_fit(responses)
    assert fit.ability("A")[0] > fit.ability("B")[0]
    assert fit.ability("A")[0] - fit.ability("B")[0] > 2  # not a near tie
    assert min(fit.difficulty(w)[0] for w in hard) > max(fit.difficulty(w)[0] for w in easy)
    # without the linking player the two halves cannot be compared: the order follows raw rates
    unlinked = rasch_fit([r for r in responses if r[0] != "C"])
    assert unlinked.ability("A")[0] < unlinked.ability("B")[0]


def test_recovers_simulated_abilities_and_difficulties():
    rng = np.random.default_rng(20)
    n_players, n_items, per_player = 150, 400, 80
    true_theta, true_b = rng.normal(0, 1.5, n_players), rng.normal(0, 1.5, n_items)
    players = np.repeat(np.arange(n_players), per_player)
    items = np.concatenate(
        [rng.choice(n_items, per_player, replace=False) for _ in range(n_players)]
    )
    solved = rng.random(players.size) < 1 / (1 + np.exp(-(true_theta[players] - true_b[items])))
    fit = rasch_fit(zip(players.tolist(), items.tolist(), solved.tolist()))
    est_theta = np.array([fit.ability(p)[0] for p in range(n_players)])
    played = [i for i in range(n_items) if i in fit._item_index]
    est_b = np.array([fit.difficulty(i)[0] for i in played])
    assert fit.converged
    assert np.corrcoef(est_theta, true_theta)[0, 1] > 0.9
    assert np.corrcoef(est_b, true_b[played])[0, 1] > 0.9
    # the intervals mean something: about 95% of them cover the true ability (shifted to the same
    # origin: the fit centres difficulties at 0)
    offset = true_b[played].mean()
    lo, hi = est_theta - Z95 * fit.theta_se, est_theta + Z95 * fit.theta_se
    coverage = np.mean((lo <= true_theta - offset) & (true_theta - offset <= hi))
    assert coverage > 0.85


def test_standard_errors_shrink_with_more_games():
    few = rasch_fit(
        [("p", f"w{i}", i % 2 == 0) for i in range(4)] + [("q", f"w{i}", i < 3) for i in range(4)]
    )
    many = rasch_fit(
        [("p", f"w{i}", i % 2 == 0) for i in range(40)]
        + [("q", f"w{i}", i < 30) for i in range(40)]
    )
    assert many.ability("p")[1] < few.ability("p")[1] / 2


def test_counts_and_pooled_repeats():
    fit = rasch_fit([("p", "x", True), ("p", "x", False), ("p", "y", True), ("q", "x", False)])
    assert fit.players == ["p", "q"] and fit.items == ["x", "y"]
    assert fit.player_n.tolist() == [3, 1] and fit.player_wins.tolist() == [2, 0]
    assert fit.item_n.tolist() == [3, 1] and fit.item_wins.tolist() == [1, 1]


def test_deterministic_and_converges_on_tens_of_thousands_of_responses():
    """Speed is measured by a benchmark, not asserted here (timed tests flake on a busy machine)."""
    rng = np.random.default_rng(3)
    n = 50_000
    players, items = rng.integers(0, 500, n), rng.integers(0, 2_000, n)
    theta, b = rng.normal(0, 1, 500), rng.normal(0, 1, 2_000)
    solved = rng.random(n) < 1 / (1 + np.exp(-(theta[players] - b[items])))
    responses = list(zip(players.tolist(), items.tolist(), solved.tolist()))
    first = rasch_fit(responses)
    second = rasch_fit(responses)
    assert first.converged
    assert np.array_equal(first.theta, second.theta) and np.array_equal(first.b, second.b)
    fitted = [first.ability(p)[0] for p in range(500)]
    assert np.corrcoef(fitted, theta)[0, 1] > 0.8


def test_theta_interval():
    assert theta_interval(0.5, 0.25) == pytest.approx((0.5 - Z95 * 0.25, 0.5 + Z95 * 0.25))
    fit = rasch_fit(SYMMETRIC, ridge=DEFAULT_RIDGE)
    lo, hi = fit.interval("A")
    theta, se = fit.ability("A")
    assert lo < theta < hi and hi - lo == pytest.approx(2 * Z95 * se)
    with pytest.raises(ValueError):
        theta_interval(0.0, -1.0)
    with pytest.raises(ValueError):
        theta_interval(float("nan"), 1.0)


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        rasch_fit([])
    with pytest.raises(ValueError):
        rasch_fit(SYMMETRIC, ridge=-0.1)
