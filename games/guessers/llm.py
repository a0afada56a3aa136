"""A guesser backed by any LLM backend: one batched `generate` for all live games."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from games.guessers.base import Ask, Guesser, GuesserState
from games.llm.base import LLMBackend, LLMPlayer, SamplingParams
from games.llm.chat import (
    DEFAULT_QUESTION_EXTRACTION,
    QUESTION_EXTRACTIONS,
    GuesserFormat,
    extract_question,
)

DEFAULT_SAMPLING = SamplingParams(max_new_tokens=48, temperature=1.0)


def turn_seed(game_seed: int, turn_index: int) -> int:
    """The sampling seed of one question: fixed by the game seed and the turn."""
    return zlib.crc32(f"guesser:{game_seed}:{turn_index}".encode()) & 0x7FFFFFFF


class LLMGuesser(LLMPlayer, Guesser):
    """Asks the question the model writes after the game's chat so far.

    `Ask.extra` carries what training needs, all JSON-serialisable: the prompt `messages`,
    `prompt_token_ids`, the generated `token_ids` with their `logprobs`, the raw `completion`
    text and the `finish_reason`. `question_extraction` says what of the reply is asked
    (games.llm.chat.extract_question): the whole reply (`reply`, the default, as the paper) or
    its first question (`first_question`, an ablation).
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        sampling: SamplingParams = DEFAULT_SAMPLING,
        chat_format: GuesserFormat = GuesserFormat(),
        name: str | None = None,
        question_extraction: str = DEFAULT_QUESTION_EXTRACTION,
    ):
        if question_extraction not in QUESTION_EXTRACTIONS:
            raise ValueError(
                f"question_extraction must be one of {', '.join(QUESTION_EXTRACTIONS)}, "
                f"got {question_extraction!r}"
            )
        super().__init__(backend, sampling, name)
        self.question_extraction = question_extraction
        self.chat_format = chat_format

    def ask_batch(self, states: Sequence[GuesserState]) -> list[Ask]:
        if not states:
            return []
        chats = [self.chat_format.messages(state.history) for state in states]
        seeds = [turn_seed(state.seed, len(state.history)) for state in states]
        generations = self.backend.generate(chats, self.sampling, seeds=seeds)
        asks = []
        for chat, gen in zip(chats, generations):
            extra = {
                "messages": chat,
                "prompt_token_ids": list(gen.prompt_token_ids)
                if gen.prompt_token_ids is not None
                else None,
                "token_ids": [int(t) for t in gen.token_ids],
                "logprobs": [float(p) for p in gen.logprobs],
                "completion": gen.text,
                "finish_reason": gen.finish_reason,
            }
            asks.append(
                Ask(question=extract_question(gen.text, self.question_extraction), extra=extra)
            )
        return asks
