"""The random guesser: a floor baseline. Each turn it guesses a random pool word ("Is it a
dog?") with probability `guess_rate`, else asks a random question in the KB judge's forms;
never the same question twice in a game, and the same seed gives the same game."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from games import rules
from games.guessers.base import Ask, Guesser, GuesserState
from games.kb import DEFAULT_SENSE, KnowledgeBase, load_kb
from games.kb.candidates import candidate_model


class RandomGuesser(Guesser):
    name = "random"

    def __init__(
        self,
        kb: KnowledgeBase | None = None,
        pool: Iterable[str] | None = None,
        sense: str = DEFAULT_SENSE,
        guess_rate: float = 0.25,
    ):
        if not 0.0 <= guess_rate <= 1.0:
            raise ValueError(f"guess_rate must be in [0, 1], got {guess_rate}")
        self.kb = kb or load_kb()
        self.model = candidate_model(self.kb, pool, sense)
        self.guess_rate = guess_rate
        is_guess = self.model.question_guess >= 0
        self._guesses = np.nonzero(is_guess)[0]
        self._questions = np.nonzero(~is_guess)[0]
        if len(self._guesses) == 0:
            raise ValueError("the candidate pool has no word of the knowledge base")

    def ask_batch(self, states: Sequence[GuesserState]) -> list[Ask]:
        return [self._ask(state) for state in states]

    def _ask(self, state: GuesserState) -> Ask:
        rng = np.random.default_rng([state.seed, len(state.history)])
        asked = {
            rules.normalise_question(t.question)
            for t in state.history
            if isinstance(t.question, str)
        }
        kinds = [self._guesses, self._questions]
        if rng.random() >= self.guess_rate:
            kinds.reverse()
        for ids in kinds:
            for q in rng.permutation(ids)[:64]:  # a few tries: almost always the first is new
                text = self.model.questions[int(q)]
                if rules.normalise_question(text) not in asked:
                    kind = "guess" if self.model.question_guess[q] >= 0 else "question"
                    return Ask(text, extra={"kind": kind})
        for q in range(len(self.model.questions)):  # a long game over a tiny pool: take any new one
            text = self.model.questions[q]
            if rules.normalise_question(text) not in asked:
                return Ask(text, extra={"kind": "question"})
        return Ask(
            f"Is it anything else than the {len(asked)} things I asked about?",
            extra={"kind": "fallback"},
        )
