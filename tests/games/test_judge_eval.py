"""`python -m games judge-eval`: a judge against reference answers, figures computed by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from games.judge_eval import agreement, evaluate, read_triples
from games.judges.kb import KBJudge
from games.kb import load_kb

ROOT = Path(__file__).resolve().parents[2]
KEYS = (
    "questions",
    "coverage",
    "accuracy",
    "accuracy_answered",
    "kappa",
    "yes_f1",
    "wrong_per_100",
    "answers_per_s",
)


def test_agreement_by_hand():
    """Six questions, one unanswered. Answered: 3 of 5 right; κ from the 2×2 table
    [[1, 1], [1, 2]]: p_o = 0.6, p_e = 0.4·0.4 + 0.6·0.6 = 0.52, κ = 0.08 / 0.48. Yes-F1: one
    true yes of 2 said and 3 in the reference (the unanswered one is a missed yes): 2/5."""
    figures = agreement(
        ["yes", "yes", "no", "unknown", "no", "no"], ["yes", "no", "no", "yes", "no", "yes"]
    )
    assert figures["questions"] == 6
    assert figures["coverage"] == pytest.approx(5 / 6, abs=1e-4)
    assert figures["accuracy"] == pytest.approx(3 / 6)
    assert figures["accuracy_answered"] == pytest.approx(3 / 5)
    assert figures["kappa"] == pytest.approx(0.08 / 0.48, abs=1e-4)
    assert figures["yes_f1"] == pytest.approx(0.4)
    assert figures["wrong_per_100"] == pytest.approx(100 * 2 / 6, abs=0.01)
    assert agreement(["unknown"], ["yes"])["kappa"] is None


def _rows():
    return [
        {"secret": "dog", "question": "Is it an animal?", "answer": "yes"},  # kb yes: right
        {"secret": "dog", "question": "Is it a kind of plant?", "answer": "no"},  # kb no: right
        {
            "secret": "dog",
            "question": "Is it a bird?",
            "answer": "yes",
        },  # kb no (isa:bird absent), the reference yes: counted wrong
        {"secret": "comb", "question": "Is it man-made?", "answer": "yes"},  # open kb: unknown
        {"secret": "dog", "question": "Can it fly?", "answer": "no"},  # ungrounded: unknown
        {"secret": "dog", "question": "Is it loud?", "answer": "tie"},  # skipped: not yes/no
        {
            "secret": "flibbertigibbet",
            "question": "Is it big?",
            "answer": "no",
        },  # secret outside the KB
    ]


def test_evaluate_skips_ties_and_unknown_secrets_and_counts_unknown_as_wrong():
    figures = evaluate(KBJudge(load_kb()), _rows())
    assert (
        figures["questions"] == 5
        and figures["skipped_rows"] == 1
        and figures["skipped_secrets"] == 1
    )
    assert figures["coverage"] == pytest.approx(3 / 5)
    assert figures["accuracy"] == pytest.approx(2 / 5) and figures[
        "accuracy_answered"
    ] == pytest.approx(2 / 3, abs=1e-4)
    closed = evaluate(KBJudge(load_kb(), closed=True), _rows())
    assert closed["coverage"] == pytest.approx(4 / 5) and closed["accuracy"] == pytest.approx(2 / 5)
    assert closed["wrong_per_100"] == pytest.approx(40.0)


def test_the_command_prints_one_json_object(tmp_path):
    path = tmp_path / "triples.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _rows()))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "games",
            "judge-eval",
            "--judge",
            "kb",
            "--triples",
            str(path),
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert all(k in figures for k in KEYS)
    assert figures["questions"] == 5 and figures["accuracy"] == pytest.approx(0.4)
    assert figures["answers_per_s"] > 0
    bad = subprocess.run(
        [sys.executable, "-m", "games", "judge-eval", "--triples", "/nope.parquet", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "/nope.parquet" in bad.stderr


def test_the_command_takes_a_precision_for_a_judge_that_runs_a_model(tmp_path, capsys):
    from games.__main__ import main

    path = tmp_path / "triples.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _rows()))
    common = ["judge-eval", "--triples", str(path), "--json"]
    for given, used in (("fp32", "float32"), ("bfloat16", "bfloat16")):
        assert main([*common, "--judge", "pretrained", "--precision", given]) == 0
        figures = json.loads(capsys.readouterr().out)
        assert figures["precision"] == used and figures["questions"] == 6  # it reads any secret
    assert main([*common, "--judge", "kb"]) == 0
    assert json.loads(capsys.readouterr().out)["precision"] is None  # the KB runs no model
    assert main([*common, "--judge", "kb", "--precision", "bf16"]) == 2
    assert "runs no model here" in capsys.readouterr().err
    assert main([*common, "--judge", "pretrained", "--precision", "fp16"]) == 2
    assert "unknown precision 'fp16'" in capsys.readouterr().err


def test_the_shipped_reference_answers_are_readable():
    rows = read_triples(ROOT / "games" / "data" / "reference-judge" / "triples.parquet")
    assert len(rows) == 436_007
    assert set(rows[0]) == {"secret", "question", "answer", "yes_votes", "no_votes"}
