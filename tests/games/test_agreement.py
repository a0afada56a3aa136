"""games.agreement against published worked examples and hand-computed tables."""

from __future__ import annotations

import numpy as np
import pytest

from games.agreement import (
    _ac1,
    _fleiss,
    agreement_report,
    bootstrap,
    cohen_kappa,
    cohen_kappa_table,
    fleiss_kappa,
    gwet_ac1,
    judge_accuracy,
    judge_outcome,
    percent_agreement,
    rating_counts,
    table_counts,
)

# Fleiss (1971), as worked on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14 raters each,
# 5 categories. P̄ = 0.378, P̄e = 0.213, κ = 0.210.
FLEISS_1971 = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed. (the irrCAC package's
# `cac.raw4raters`): 12 units, 4 raters, categories 1-5, missing ratings (None).
# irrCAC's gwet.ac1.raw prints pa = 0.8181818, pe = 0.1903212, AC1 = 0.77544.
N = None
GWET_4RATERS = [
    [1, 1, N, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [N, 5, 5, 5],
    [N, N, 1, 1],
    [N, N, 3, N],
]


def test_fleiss_kappa_reproduces_the_fleiss_1971_example():
    counts = np.array(FLEISS_1971, dtype=float)
    assert percent_agreement(counts) == pytest.approx(0.378, abs=5e-4)
    assert fleiss_kappa(counts) == pytest.approx(0.210, abs=5e-4)
    assert fleiss_kappa(counts) == pytest.approx(0.20993, abs=1e-5)


def test_gwet_ac1_reproduces_the_handbook_example_with_missing_ratings():
    counts = rating_counts(GWET_4RATERS, categories=[1, 2, 3, 4, 5])
    assert counts.sum() == 41  # 48 cells, 7 missing
    assert percent_agreement(counts) == pytest.approx(
        0.8181818, abs=1e-7
    )  # unit 12 (one rating) is left out
    assert gwet_ac1(counts) == pytest.approx(0.77544, abs=5e-6)


def test_cohen_kappa_on_a_hand_computed_two_by_two_table():
    # 50 units: both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    # p_o = 35/50 = 0.70; A says yes 25/50 = 0.5, B 30/50 = 0.6;
    # p_e = 0.5·0.6 + 0.5·0.4 = 0.50; κ = (0.70 − 0.50) / (1 − 0.50) = 0.40.
    table = [[20, 5], [10, 15]]
    assert cohen_kappa_table(table) == pytest.approx(0.40)
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.40)
    # two raters' AC1 from the same table: π_yes = (0.5 + 0.6)/2 = 0.55, p_e = 2·0.55·0.45 = 0.495,
    # AC1 = (0.70 − 0.495) / 0.505 = 0.40594
    assert gwet_ac1(table_counts(table)) == pytest.approx(0.205 / 0.505)


def test_kappa_paradox_high_agreement_with_one_dominant_label():
    # 125 units, two raters: both "no" 118, A no/B yes 5, A yes/B no 2, both yes 0
    # (agreement 94.4%).
    # Cohen: p_e = (123·120 + 2·5)/125² = 0.94528, κ = (0.944 − 0.94528)/(1 − 0.94528) = −0.0234.
    # AC1: π_no = (123 + 120)/250 = 0.972, p_e = 2·0.972·0.028 = 0.054432,
    # AC1 = 0.889568/0.945568 = 0.94078.
    table = [[118, 5], [2, 0]]
    counts = table_counts(table)
    assert percent_agreement(counts) == pytest.approx(0.944)
    assert cohen_kappa_table(table) == pytest.approx(-0.02340, abs=1e-5)
    assert fleiss_kappa(counts) == pytest.approx(
        -0.0288, abs=1e-4
    )  # Scott's π for two raters, also near zero
    assert gwet_ac1(counts) == pytest.approx(0.94078, abs=1e-5)


def test_degenerate_inputs_give_none_not_nan():
    everyone_no = np.array([[0, 3], [0, 3]], dtype=float)
    assert fleiss_kappa(everyone_no) is None  # p_e = 1: undefined
    assert gwet_ac1(everyone_no) == pytest.approx(1.0)
    assert percent_agreement(np.zeros((0, 2))) is None
    assert cohen_kappa_table([[0, 0], [0, 0]]) is None


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    counts = np.array(FLEISS_1971, dtype=float)
    first = bootstrap(_fleiss, counts, n_boot=400, seed=3)
    again = bootstrap(_fleiss, counts, n_boot=400, seed=3)
    other = bootstrap(_fleiss, counts, n_boot=400, seed=4)
    assert first == again and first != other
    assert first.lo < first.value < first.hi and first.n == 10
    assert bootstrap(_ac1, counts[:1], n_boot=50).lo is None  # one unit: no interval


def test_agreement_report_per_rater_pair_and_unit():
    ratings = {
        1: {"ann": "yes", "bob": "yes", "cat": "yes"},
        2: {"ann": "no", "bob": "no", "cat": "yes"},
        3: {"ann": "no", "bob": "no", "cat": "no"},
        4: {"ann": "yes", "bob": "no"},
        5: {"ann": "no"},  # one rating: counted in shares, not in agreement
    }
    report = agreement_report(
        ratings, ["yes", "no", "unclear", "invalid"], gold={2: "no", 4: "no"}, n_boot=200
    )
    assert report.n_units == 4 and report.n_ratings == 12
    assert report.percent_agreement.value == pytest.approx((1 + 1 / 3 + 1 + 0) / 4)
    rows = {r["rater"]: r for r in report.raters}
    assert rows["ann"]["agreement_with_others"]["value"] == pytest.approx(5 / 7)  # 7 pairs, 5 agree
    assert rows["bob"]["agreement_with_gold"]["value"] == 1.0 and rows["ann"]["gold_n"] == 2
    assert rows["ann"]["agreement_with_gold"]["value"] == 0.5
    pairs = {(p["a"], p["b"]): p for p in report.pairs}
    assert pairs[("ann", "bob")]["n"] == 4 and pairs[("ann", "bob")]["agreement"] == 0.75
    assert pairs[("ann", "bob")]["cohen_kappa"]["value"] == pytest.approx(
        cohen_kappa(["yes", "no", "no", "yes"], ["yes", "no", "no", "no"])
    )
    assert report.units[2] == {
        "n": 3,
        "agreement": pytest.approx(1 / 3),
        "majority": "no",
        "majority_share": pytest.approx(2 / 3),
    }
    assert report.units[4]["majority"] is None  # a tie has no majority
    assert report.label_shares["no"] == pytest.approx(7 / 12)


def test_single_rated_units_count_in_the_category_shares_of_the_coefficients():
    ratings = {
        1: {"ann": "yes", "bob": "yes", "cat": "yes"},
        2: {"ann": "no", "bob": "no", "cat": "yes"},
        3: {"ann": "no", "bob": "no", "cat": "no"},
        4: {"ann": "yes", "bob": "no"},
        5: {"ann": "no"},
    }
    report = agreement_report(ratings, ["yes", "no", "unclear", "invalid"], n_boot=50)
    # p_a over the four units with two or more ratings: (1 + 1/3 + 1 + 0) / 4 = 7/12
    # π over all five rated units: yes (1 + 1/3 + 0 + 1/2 + 0) / 5 = 11/30,
    # no (0 + 2/3 + 1 + 1/2 + 1) / 5 = 19/30
    # AC1: p_e = (11/30 · 19/30 + 19/30 · 11/30) / 3 = 418/2700,
    # (7/12 − 418/2700) / (1 − 418/2700) = 1157/2282
    # Fleiss: p_e = (11/30)² + (19/30)² = 482/900, (7/12 − 482/900) / (1 − 482/900) = 43/418
    assert report.percent_agreement.value == pytest.approx(7 / 12)
    assert report.gwet_ac1.value == pytest.approx(1157 / 2282)
    assert report.fleiss_kappa.value == pytest.approx(43 / 418)
    # without unit 5 the shares would be 11/24 and 13/24, and AC1 (7/12 − 286/1728) / (1 − 286/1728)
    assert report.gwet_ac1.value != pytest.approx((7 / 12 - 286 / 1728) / (1 - 286 / 1728))
    assert report.n_units == 4


def test_judge_taxonomy_and_accuracy():
    assert judge_outcome("no", "yes") == "false_no"
    assert (
        judge_outcome("unknown", "no") == "unrecognised"
        and judge_outcome("invalid", "yes") == "unrecognised"
    )
    assert judge_outcome("yes", "invalid") == "answered_invalid"
    assert judge_outcome("unknown", "invalid") == "abstained_on_invalid"
    assert judge_outcome("yes", "unclear") is None
    pairs = [
        ("yes", "yes"),
        ("no", "no"),
        ("no", "yes"),
        ("yes", "no"),
        ("unknown", "yes"),
        ("invalid", "invalid"),
        ("yes", "unclear"),
    ]
    acc = judge_accuracy(pairs)
    assert acc["n"] == 6 and acc["correct"] == 3 and acc["gold_unclear"] == 1
    assert (
        acc["accuracy"]["value"] == 0.5
        and 0 < acc["accuracy"]["lo"] < 0.5 < acc["accuracy"]["hi"] < 1
    )
    assert acc["coverage"]["value"] == pytest.approx(4 / 5)
    assert acc["answered_accuracy"]["value"] == 0.5
    assert acc["taxonomy"]["false_no"] == 1 and acc["taxonomy"]["unrecognised"] == 1
    assert judge_accuracy([])["accuracy"]["value"] is None
