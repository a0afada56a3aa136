"""bench.learning's protocol: disjoint splits, no game-format row about a held-out secret, the
imperfect teacher, and the paired bootstrap of the ordering computed by hand."""

from __future__ import annotations

import io

import numpy as np
import pytest

from bench.learning.ordering import ordering, paired_bootstrap
from bench.learning.scale import QUICK, with_settings
from bench.learning.stages import sft_config, sft_rows
from bench.learning.world import held_out, make_world
from games.rules import names_secret
from training.reporting import ConsoleReporter


@pytest.fixture(scope="module")
def world():
    return make_world(QUICK)


def test_the_splits_are_disjoint_and_fill_their_sizes(world):
    splits = [set(world[s]) for s in ("sft", "rl", "val", "test")]
    assert [len(s) for s in splits] == [QUICK.sft, QUICK.rl, QUICK.val, QUICK.test]
    assert sum(len(s) for s in splits) == len(set().union(*splits))
    assert set().union(*splits) <= set(world["pool"]) and held_out(world) == splits[2] | splits[3]
    assert make_world(QUICK) == world  # seeded


def test_sft_rows_never_mention_a_validation_or_test_secret(world, tmp_path):
    scale = with_settings(QUICK, ["naming_per_word=3", "recovery_per_game=2"])
    config = sft_config(scale, tmp_path, "unused", world, seed=1)
    rows, counts = sft_rows(
        scale, config, ConsoleReporter(tmp_path, stream=io.StringIO()), world, seed=1
    )
    secrets = {r["secret"] for r in rows}
    assert secrets <= set(world["sft"]) | set(world["rl"]) and not secrets & held_out(world)
    # nor does any trained completion name one (a wrong guess of the teacher's, issue 32)
    hidden = held_out(world)
    named = [
        (w, r["completion"][0]["content"])
        for r in rows
        for w in hidden
        if names_secret(r["completion"][0]["content"], w)
    ]
    assert not named, named[:5]
    assert counts["naming_examples"] == 3 * len(world["rl"]) and counts["games"] == len(
        world["sft"]
    )
    naming = [r for r in rows if r.get("game") == -1]
    assert {r["secret"] for r in naming} == set(world["rl"])
    again, _ = sft_rows(
        scale, config, ConsoleReporter(tmp_path, stream=io.StringIO()), world, seed=1
    )
    assert again == rows  # the seed fixes the teacher's draws and the order


def test_a_warm_teacher_asks_worse_questions_than_the_best(world, tmp_path):
    cold = with_settings(
        QUICK, ["teacher_temperature=0", "naming_per_word=0", "recovery_per_game=0", "max_turns=20"]
    )
    warm = with_settings(cold, ["teacher_temperature=0.3"])  # measured: 6.7 turns cold, 15.3 warm
    turns = {}
    for name, scale in (("cold", cold), ("warm", warm)):
        config = sft_config(scale, tmp_path, "unused", world, seed=0)
        turns[name] = sft_rows(
            scale, config, ConsoleReporter(tmp_path, stream=io.StringIO()), world, 0
        )[1]["teacher_mean_turns"]
    assert turns["warm"] > turns["cold"] + 3


def test_paired_bootstrap_by_hand():
    a = np.array([[1.0, 0.5, 0.0], [1.0, 1.0, 0.5]])
    b = a - 0.25  # every (seed, word) pair 0.25 apart: any resample gives 0.25
    assert paired_bootstrap(a, b) == {"mean": 0.25, "ci95": [0.25, 0.25]}
    c = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    # differences [[1, .5, 0], [1, 1, .5]]: mean 4/6; resamples stay between 0 and 1
    result = paired_bootstrap(a, c, n_boot=2000)
    assert result["mean"] == round(4 / 6, 4)
    assert 0.0 <= result["ci95"][0] < result["mean"] < result["ci95"][1] <= 1.0


def test_the_ordering_object_has_the_arms_the_differences_and_the_targets():
    words = ["w1", "w2", "w3", "w4"]
    per_word = {
        "sft": [dict.fromkeys(words, 0.1), dict.fromkeys(words, 0.1)],
        "starpo": [dict.fromkeys(words, 0.2), dict.fromkeys(words, 0.3)],
        "cia": [dict.fromkeys(words, 0.4), dict.fromkeys(words, 0.4)],
    }
    result = ordering(per_word, words, [0, 1])
    assert result["arms"]["starpo"] == {"success": 0.25, "per_seed": [0.2, 0.3]}
    assert (
        result["paired"]["cia_minus_sft"]["mean"] == 0.3
        and result["paired"]["starpo_minus_sft"]["mean"] == 0.15
    )
    lo, hi = result["paired"]["cia_minus_starpo"]["ci95"]
    assert 0.1 <= lo <= 0.15 <= hi <= 0.2  # the seed resampling: 0.2 or 0.1 per seed
    assert result["targets"] == {
        "cia_minus_starpo_ci_above_0": True,
        "starpo_minus_sft_ci_above_0": True,
        "best_grpo_at_least_sft_plus_0.05": True,
    }
    assert result["seeds"] == [0, 1] and result["test_words"] == 4
