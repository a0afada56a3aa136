"""A judge that prompts a model (any LLM backend) and parses `<answer>…</answer>`."""

from __future__ import annotations

from collections.abc import Sequence

from games.judges.base import Judge, JudgeRequest
from games.llm.base import LLMBackend, LLMPlayer, SamplingParams
from games.llm.chat import judge_messages, parse_judge_answer
from games.types import JudgeAnswer, Verdict

DEFAULT_JUDGE_SAMPLING = SamplingParams(max_new_tokens=128, temperature=0.0, stop=("</answer>",))


class LLMJudge(LLMPlayer, Judge):
    """Answers every request of a batch with one `generate` call.

    Output without a readable `<answer>` verdict becomes `Verdict.UNKNOWN` (it costs the guesser
    a turn, not the invalid penalty: the judge failed, not the question); the raw text is kept in
    `JudgeAnswer.raw` either way. The engine's rule checks still run around this judge. (The
    reference's rollout reads such a reply as "invalid"; we do not punish the questioner for it.)
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        sampling: SamplingParams = DEFAULT_JUDGE_SAMPLING,
        with_history: bool = False,
        name: str | None = None,
    ):
        super().__init__(backend, sampling, name)
        self.with_history = with_history

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        if not requests:
            return []
        chats = [
            judge_messages(r.secret, r.question, r.history, with_history=self.with_history)
            for r in requests
        ]
        generations = self.backend.generate(chats, self.sampling, seeds=[r.seed for r in requests])
        answers = []
        for gen in generations:
            verdict = parse_judge_answer(
                gen.text
            )  # reads an answer left open by the stop string too
            answers.append(
                JudgeAnswer(verdict if verdict is not None else Verdict.UNKNOWN, raw=gen.text)
            )
        return answers
