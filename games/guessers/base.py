"""The guesser interface: asks the next question of one or many games at once."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from games.types import Turn


@dataclass
class GuesserState:
    """Per-game state a guesser keeps between turns (history plus its own notes)."""

    seed: int
    history: list[Turn] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Ask:
    """A guesser's next question plus what training and the UI may want to know."""

    question: str
    candidates_left: int | None = None
    top_candidates: list[tuple[str, float]] | None = None  # posterior after the last answer
    # LLM guessers: the chat prompt, generated token ids, their logprobs, ...
    extra: dict[str, Any] = field(default_factory=dict)


class Guesser(ABC):
    name: str = "guesser"

    def start(self, *, seed: int) -> GuesserState:
        return GuesserState(seed=seed)

    @abstractmethod
    def ask_batch(self, states: Sequence[GuesserState]) -> list[Ask]:
        """The next question for each live game, in order."""

    def observe(self, state: GuesserState, turn: Turn) -> None:
        """Record the judged turn (subclasses update beliefs, then call super)."""
        state.history.append(turn)

    def ask(self, state: GuesserState) -> Ask:
        return self.ask_batch([state])[0]
