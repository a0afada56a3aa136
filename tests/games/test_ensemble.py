"""EnsembleJudge: majority, ties, votes, disagreement and secret checks."""

from __future__ import annotations

import pytest

from games.engine import TwentyQuestions
from games.judges.base import Judge, JudgeRequest, UnknownSecretError
from games.judges.ensemble import EnsembleJudge
from games.types import JudgeAnswer, Verdict


class FixedJudge(Judge):
    def __init__(self, name: str, verdicts: list[Verdict], known: set[str] | None = None):
        self.name = name
        self.verdicts = verdicts
        self.known = known
        self.calls = 0

    def check_secret(self, secret: str) -> None:
        if self.known is not None and secret not in self.known:
            raise UnknownSecretError(f"{self.name} does not know {secret}")

    def judge_batch(self, requests):
        self.calls += 1
        return [
            JudgeAnswer(self.verdicts[i % len(self.verdicts)], raw=f"{self.name}-{i}")
            for i in range(len(requests))
        ]


Y, N, U, INV = Verdict.YES, Verdict.NO, Verdict.UNKNOWN, Verdict.INVALID
REQUESTS = [JudgeRequest("apple", "Is it red?"), JudgeRequest("apple", "Is it blue?")]


def test_majority_votes_and_disagreement():
    members = [FixedJudge("a", [Y, N]), FixedJudge("b", [Y, N]), FixedJudge("c", [N, N])]
    answers = EnsembleJudge(members).judge_batch(REQUESTS)
    assert [a.verdict for a in answers] == [Y, N]
    assert answers[0].votes == {"a": "yes", "b": "yes", "c": "no"} and answers[0].disagreement
    assert answers[1].votes == {"a": "no", "b": "no", "c": "no"} and not answers[1].disagreement
    assert "a: yes | a-0" in answers[0].raw and "c: no | c-0" in answers[0].raw
    assert all(m.calls == 1 for m in members)  # one batch per member


@pytest.mark.parametrize("tie_break, expected", [("unknown", U), ("first", N)])
def test_ties(tie_break, expected):
    # no: 2 (a, d), yes: 2 (b, e), invalid: 1 (c); the first member of a tied verdict voted "no"
    members = [FixedJudge(name, [v]) for name, v in zip("abcde", [N, Y, INV, N, Y])]
    answer = EnsembleJudge(members, tie_break=tie_break).judge_batch(REQUESTS[:1])[0]
    assert answer.verdict is expected and answer.disagreement


def test_duplicate_member_names_are_suffixed():
    judge = EnsembleJudge([FixedJudge("kb", [Y]), FixedJudge("kb", [N]), FixedJudge("kb", [N])])
    assert judge.member_names == ["kb", "kb#2", "kb#3"]
    assert judge.judge_batch(REQUESTS[:1])[0].votes == {"kb": "yes", "kb#2": "no", "kb#3": "no"}


def test_check_secret_needs_every_member():
    judge = EnsembleJudge([FixedJudge("a", [Y]), FixedJudge("b", [Y], known={"apple"})])
    judge.check_secret("apple")
    with pytest.raises(UnknownSecretError, match="b does not know"):
        judge.check_secret("pear")


def test_invalid_construction():
    with pytest.raises(ValueError):
        EnsembleJudge([])
    with pytest.raises(ValueError):
        EnsembleJudge([FixedJudge("a", [Y])], tie_break="coin")


def test_votes_reach_the_turn_through_the_engine():
    env = TwentyQuestions(
        EnsembleJudge([FixedJudge("a", [Y]), FixedJudge("b", [N]), FixedJudge("c", [N])])
    )
    env.reset("apple", seed=0)
    turn = env.step("Is it red?").turn
    assert turn.verdict is N and turn.extra == {
        "votes": {"a": "yes", "b": "no", "c": "no"},
        "disagreement": True,
    }
