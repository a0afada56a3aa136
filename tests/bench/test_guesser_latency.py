"""bench.guesser_latency: every question of a one-at-a-time game is timed, per precision, the
precisions interleaved on the same words and seeds."""

from __future__ import annotations

import json

from bench import guesser_latency
from tests.training.sft.helpers import tiny_model


def test_every_question_is_timed_for_each_precision(tmp_path_factory, capsys):
    base = str(tiny_model(tmp_path_factory))
    out = guesser_latency.main(
        [
            "--guesser",
            "tiny=",
            "--base",
            base,
            "--judge",
            "kb",
            "--games",
            "2",
            "--precisions",
            "float32,bfloat16",
            "--threads",
            "1",
        ]
    )
    assert json.loads(capsys.readouterr().out) == out  # the JSON on stdout, nothing else
    tiny = out["guessers"]["tiny"]
    assert set(tiny["variants"]) == {"float32", "bfloat16"}
    assert tiny["precision"] == "float32" and tiny["threads"] == 1  # the first precision's
    for variant in tiny["variants"].values():
        assert variant["games"] == 2 and variant["questions"] == variant["turns"] >= 2
        assert 0 < variant["p50_s"] <= variant["p95_s"] <= variant["max_s"]


def test_quantiles_of_a_few_questions():
    assert guesser_latency.quantiles([0.3, 0.1, 0.2, 0.4]) == {
        "p50_s": 0.25,
        "p95_s": 0.4,
        "max_s": 0.4,
    }
