"""The judge interface: answers a yes/no question about a secret word."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from games.types import JudgeAnswer, Turn, Verdict


class UnknownSecretError(ValueError):
    """The judge cannot play with this secret (e.g. a word outside the knowledge base)."""


@dataclass
class JudgeRequest:
    secret: str
    question: str
    history: Sequence[Turn] = field(default_factory=tuple)
    seed: int = 0  # for judges that sample; the engine derives it from the game seed


class Judge(ABC):
    """Answers questions; the engine applies the rule-based checks around it."""

    name: str = "judge"

    def check_secret(self, secret: str) -> None:
        """Raise UnknownSecretError if this judge cannot answer about `secret`."""
        return None  # by default every secret is answerable

    @abstractmethod
    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        """One answer per request, in order. Must never raise on odd question text."""

    def judge(
        self, secret: str, question: str, history: Sequence[Turn] = (), seed: int = 0
    ) -> JudgeAnswer:
        return self.judge_batch([JudgeRequest(secret, question, tuple(history), seed)])[0]


def playable_words(judge: Judge, words: Iterable[str]) -> tuple[list[str], list[str]]:
    """(the words `judge` can play, the others), each in the given order."""
    ok, skipped = [], []
    for word in words:
        try:
            judge.check_secret(word)
            ok.append(word)
        except UnknownSecretError:
            skipped.append(word)
    return ok, skipped


def probability_answer(p: float, threshold: float, abstain: float, source: str) -> JudgeAnswer:
    """A judge's P(yes) as its answer: yes from `threshold` on, else no; unknown within `abstain`
    of the threshold (0: never). `source` names the judge in the raw text."""
    p = float(p)
    if abstain and abs(p - threshold) < abstain:
        verdict = Verdict.UNKNOWN
    else:
        verdict = Verdict.YES if p >= threshold else Verdict.NO
    return JudgeAnswer(verdict, raw=f"{source}: p(yes)={p:.3f}", p_yes=round(p, 4))
