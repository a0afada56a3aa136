"""judge_sft: the LLM judge's own chat with the reference verdict as the trained answer."""

from __future__ import annotations

import pytest

from games.judges.kb import KBJudge
from games.llm.chat import judge_messages, parse_judge_answer
from games.types import Verdict
from tests.training.sft.helpers import trajectory
from training.judge.llm import JudgeSFTJobConfig, judge_examples

Y, N, F = Verdict.YES, Verdict.NO, Verdict.FINISHED


def test_examples_from_turns_and_cross_questions():
    games = [
        trajectory(
            "dog",
            [("Is it a kind of animal?", Y), ("Is it a kind of vehicle?", N), ("Is it a dog?", F)],
        ),
        trajectory(
            "car",
            [
                ("Is it a kind of animal?", N),
                ("Is it made of metal?", Y),
                ("Is it blah", Verdict.INVALID),
                ("Is it a car?", F),
            ],
        ),
    ]
    rows = judge_examples(games, KBJudge(closed=True), cross_questions=2, seed=0)
    own = rows[:6]
    assert [(r["secret"], r["question"], r["verdict"]) for r in own] == [
        ("dog", "Is it a kind of animal?", "yes"),
        ("dog", "Is it a kind of vehicle?", "no"),
        ("dog", "Is it a dog?", "finished"),
        ("car", "Is it a kind of animal?", "no"),
        ("car", "Is it made of metal?", "yes"),
        ("car", "Is it a car?", "finished"),
    ]  # invalid: no judge
    assert own[0]["prompt"] == judge_messages("dog", "Is it a kind of animal?")
    assert all(
        parse_judge_answer(r["completion"][0]["content"]).value == r["verdict"] for r in rows
    )
    cross = rows[6:]
    assert cross and all(
        (r["secret"], r["question"]) not in {(o["secret"], o["question"]) for o in own}
        for r in cross
    )
    judge = KBJudge(closed=True)
    assert all(judge.judge(r["secret"], r["question"]).verdict.value == r["verdict"] for r in cross)
    assert len(cross) == 4 and {r["secret"] for r in cross} == {"dog", "car"}


def test_config():
    assert JudgeSFTJobConfig().selection == "all"
    with pytest.raises(ValueError, match="^cross_questions"):
        JudgeSFTJobConfig(cross_questions=-1)
