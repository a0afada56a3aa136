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

    With a `candidate_pool` (the words a guesser trained in the knowledge-base world knows), each
    ask also reports the `top_k` pool words the answers so far leave most likely, as
    `Ask.top_candidates`: the information-gain guesser's posterior over that pool (scoring every
    pool word with the model instead costs seconds per question on a CPU).
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        sampling: SamplingParams = DEFAULT_SAMPLING,
        chat_format: GuesserFormat = GuesserFormat(),
        name: str | None = None,
        question_extraction: str = DEFAULT_QUESTION_EXTRACTION,
        candidate_pool: Sequence[str] | None = None,
        top_k: int = 5,
    ):
        if question_extraction not in QUESTION_EXTRACTIONS:
            raise ValueError(
                f"question_extraction must be one of {', '.join(QUESTION_EXTRACTIONS)}, "
                f"got {question_extraction!r}"
            )
        super().__init__(backend, sampling, name)
        self.question_extraction = question_extraction
        self.chat_format = chat_format
        self.candidate_pool = list(dict.fromkeys(candidate_pool or ()))
        self.top_k = top_k
        self._pool_tracker = None

    def pool_candidates(self, state: GuesserState) -> list[tuple[str, float]]:
        """The `top_k` pool words after the game so far, by the information-gain guesser's
        posterior over the pool (the knowledge base's reading of each answer)."""
        import numpy as np

        from games.guessers.infogain import InfoGainGuesser

        if self._pool_tracker is None:
            self._pool_tracker = InfoGainGuesser(pool=self.candidate_pool, top_k=self.top_k)
        tracked = state.data.setdefault(  # shares the history: the tracker catches up by itself
            "pool_tracker", GuesserState(seed=state.seed, history=state.history)
        )
        p = self._pool_tracker.posterior(tracked)
        words = self._pool_tracker.model.words
        return [(words[i], float(p[i])) for i in np.argsort(-p, kind="stable")[: self.top_k]]

    def ask_batch(self, states: Sequence[GuesserState]) -> list[Ask]:
        if not states:
            return []
        chats = [self.chat_format.messages(state.history) for state in states]
        seeds = [turn_seed(state.seed, len(state.history)) for state in states]
        generations = self.backend.generate(chats, self.sampling, seeds=seeds)
        asks = []
        for state, chat, gen in zip(states, chats, generations):
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
                Ask(
                    question=extract_question(gen.text, self.question_extraction),
                    top_candidates=self.pool_candidates(state) if self.candidate_pool else None,
                    extra=extra,
                )
            )
        return asks
