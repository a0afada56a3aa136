"""`kb+learned`: the knowledge-base judge where it vouches for an answer, the learned judge for
the rest.

The KB answers when its open-world judge says yes or no: the question grounds to a stored fact,
or to a hypernym it is complete for. Every other question (free text, a part or property the KB
does not list) goes to the learned judge, in one batch. The raw text says which one answered.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.judges.base import Judge, JudgeRequest
from games.judges.kb import KBJudge
from games.judges.learned import LearnedJudge
from games.types import JudgeAnswer, Verdict


class HybridJudge(Judge):
    def __init__(self, kb: KBJudge, learned: LearnedJudge, *, name: str | None = None):
        if kb.closed:
            raise ValueError(
                "the hybrid needs the open-world KB judge (closed=False): a closed one never defers"
            )
        self.kb, self.learned = kb, learned
        self.name = name or "kb+learned"

    def check_secret(self, secret: str) -> None:
        self.kb.check_secret(secret)
        self.learned.check_secret(secret)

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        answers = self.kb.judge_batch(requests)
        deferred = [i for i, a in enumerate(answers) if a.verdict not in (Verdict.YES, Verdict.NO)]
        learned = self.learned.judge_batch([requests[i] for i in deferred])
        for answer in answers:
            answer.raw = f"kb: {answer.raw}"
        for i, answer in zip(deferred, learned):
            answers[i] = answer
        return answers
