"""Shared fixtures for the LLM-side game tests: the tiny local model (built once per session)
and scripted fakes for backends, guessers and judges."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from games.guessers.base import Ask, Guesser, GuesserState
from games.judges.base import Judge, JudgeRequest
from games.llm.base import Generation, LLMBackend, SamplingParams
from games.types import JudgeAnswer, Verdict


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    from training.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="session")
def tiny_backend(tiny_model_dir):
    from games.llm.transformers_backend import TransformersBackend

    # float32: the exactness tests compare the cache, batching and scoring to 1e-4
    return TransformersBackend(str(tiny_model_dir), precision="float32")


class ScriptedBackend(LLMBackend):
    """Replies with `reply(chat, seed)`; records every call."""

    name = "scripted"

    def __init__(self, reply):
        self.reply = reply
        self.calls: list[tuple[list, SamplingParams, list | None]] = []

    def generate(self, chats, sampling, *, seeds=None):
        self.calls.append((list(chats), sampling, None if seeds is None else list(seeds)))
        seeds = seeds or [None] * len(chats)
        return [
            Generation(self.reply(chat, seed), [1, 2, 3], [-0.5, -0.25, -0.125], [7, 8], "stop")
            for chat, seed in zip(chats, seeds)
        ]

    def score_spans(self, chats, replies, spans):
        return [-float(len(c)) for c in chats]


class CountingJudge(Judge):
    """Yes when the secret's first letter is in the question, else No; counts batch calls."""

    name = "counting"

    def __init__(self):
        self.batches: list[int] = []

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        self.batches.append(len(requests))
        return [
            JudgeAnswer(
                Verdict.YES if r.secret[0] in r.question.lower() else Verdict.NO,
                raw=f"seed {r.seed}",
            )
            for r in requests
        ]


class ScriptedGuesser(Guesser):
    """Asks `questions[seed][turn]`; counts batch calls."""

    name = "scripted-guesser"

    def __init__(self, questions: dict[int, list[str]]):
        self.questions = questions
        self.batches: list[list[int]] = []

    def ask_batch(self, states: Sequence[GuesserState]) -> list[Ask]:
        self.batches.append([s.seed for s in states])
        asks = []
        for s in states:
            script = self.questions[s.seed]
            question = script[min(len(s.history), len(script) - 1)]
            asks.append(
                Ask(
                    question,
                    candidates_left=100 - len(s.history),
                    top_candidates=[("cat", 0.5)],
                    extra={"turn_seen": len(s.history)},
                )
            )
        return asks


@pytest.fixture
def scripted_backend():
    return ScriptedBackend


@pytest.fixture
def counting_judge():
    return CountingJudge()


@pytest.fixture
def scripted_guesser():
    return ScriptedGuesser
