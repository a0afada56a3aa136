"""bench.natural's own parts: the answerer that never contradicts the guesser's matrix, the paired
difference every comparison reports, and `--only` replacing one part of the results file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench import natural as bench
from games.guessers.natural import load_data, save_data
from games.judges.base import JudgeRequest
from games.types import Verdict


def test_the_own_matrix_judge_says_yes_where_the_matrix_holds_at_least_a_half(tmp_path):
    path = save_data(
        tmp_path / "small.npz",
        questions=["Is it an animal?", "Is it red?"],
        words=["dog", "apple"],
        p_yes=np.array([[0.9, 0.49], [0.1, 0.5]]),
    )
    judge = bench.OwnMatrixJudge(load_data(path))
    asked = [
        ("dog", "Is it an animal?"),
        ("dog", "Is it red?"),  # 0.49: no
        ("apple", "is it red"),  # the bank's question in other words of the same key
        ("dogs", "Is it an animal?"),  # a plural finds its word
        ("apple", "Is it made of wood?"),  # outside the bank: no
        ("pebble", "Is it an animal?"),  # outside the pool: no
    ]
    answers = judge.judge_batch([JudgeRequest(secret=s, question=q) for s, q in asked])
    assert [a.verdict for a in answers] == [
        Verdict.YES,
        Verdict.NO,
        Verdict.YES,
        Verdict.YES,
        Verdict.NO,
        Verdict.NO,
    ]


def test_the_paired_difference_by_hand():
    new = [True, True, False, True, False]
    old = [True, False, False, False, True]
    # differences 0, 1, 0, 1, -1: mean 0.2, sample sd sqrt(0.7), half-width 1.96 sd / sqrt(5)
    half = 1.96 * 0.7**0.5 / 5**0.5
    row = bench.paired_difference(new, old)
    assert row["difference"] == 0.2
    assert row["difference_ci95"] == [round(0.2 - half, 4), round(0.2 + half, 4)]
    assert (row["new"], row["old"], row["new_only"], row["old_only"]) == (0.6, 0.4, 2, 1)


def test_only_one_part_measured_again_keeps_the_rest_of_the_file(tmp_path, monkeypatch):
    out = tmp_path / "natural.json"
    saved = {
        "guesser": "natural",
        "evaluations": {"everyday100/pretrained": {"strict_success_rate": 0.46}},
        "latency": {"p50_ms": 3.9},
        "notes": ["kept"],
        "seconds": 180.0,
    }
    out.write_text(json.dumps(saved), encoding="utf-8")
    monkeypatch.setattr(bench, "cross_encoder_alone", lambda: None)
    monkeypatch.setattr(bench, "own_matrix_games", lambda spec: {"measured": spec})
    assert bench.main(["--only", "own-matrix", "--out", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result == {**saved, "own_matrix": {"measured": "natural"}}


@pytest.mark.parametrize("part", ["latency", "everyday100/pretrained"])
def test_a_whole_run_without_only_starts_the_file_afresh(tmp_path, monkeypatch, part):
    out = tmp_path / "natural.json"
    out.write_text(json.dumps({"evaluations": {"old": 1}, "notes": ["old"]}), encoding="utf-8")
    monkeypatch.setattr(bench, "cross_encoder_alone", lambda: None)
    monkeypatch.setattr(bench, "latency", lambda spec, games: {"p50_ms": 1.0})
    monkeypatch.setattr(bench, "evaluation", lambda words, judge, samples, spec: {"w": words})
    monkeypatch.setattr(bench, "reference_games", lambda spec: {"r": 1})
    monkeypatch.setattr(bench, "own_matrix_games", lambda spec: {"o": 1})
    assert bench.main(["--out", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "notes" not in result and "old" not in result["evaluations"]
    assert part in result or part in result["evaluations"]
    assert set(result["evaluations"]) == set(bench.EVALUATIONS)


def test_validation_rows_pool_the_lists_and_play_the_baseline_once(monkeypatch):
    lists = {"everyday/everyday_val": ["dog", "cat"], "dbrl/paper_val": ["oak"]}
    won = {  # spec: the words it wins
        "natural": {"dog"},
        "natural:x=1": {"dog", "cat", "oak"},
    }
    played: list[str] = []

    def wins_by_word(spec, words, judge):
        played.append(spec)
        return [w in won[spec] for w in words]

    monkeypatch.setattr(bench, "wins_by_word", wins_by_word)
    monkeypatch.setattr("games.registry.build_judge", lambda spec: object())
    monkeypatch.setattr("games.wordlists.read_words", lambda name: lists[name])
    rows = bench.validation_rows(["natural", "natural:x=1"], "natural", "default")
    assert played == ["natural", "natural", "natural:x=1", "natural:x=1"]  # once per list
    assert [r["success"] for r in rows] == [
        {"everyday/everyday_val": 0.5, "dbrl/paper_val": 0.0},
        {"everyday/everyday_val": 1.0, "dbrl/paper_val": 1.0},
    ]
    assert rows[0]["pooled_vs_default"]["difference"] == 0.0
    pooled = rows[1]["pooled_vs_default"]  # differences 0, 1, 1 over the three words
    assert (pooled["words"], pooled["difference"], pooled["new_only"]) == (3, 0.6667, 2)
