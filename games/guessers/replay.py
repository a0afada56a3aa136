"""A guesser whose per-game notes are kept up to date by replaying the game's turns.

The notes live in `state.data`: the subclass's own (`_fresh_notes`), plus `asked_texts` (every
question asked, normalised) and `seen` (how many turns of the history they include). Turns
appended to the history without `observe()` are replayed before the notes are read, so a state
built elsewhere (the web app, a test) reads the same as one the guesser followed. Each game is
asked from its own notes (`_ask`); `posterior_of` turns log-weights over the words into beliefs.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

import numpy as np

from games import rules
from games.guessers.base import Ask, Guesser, GuesserState
from games.types import Turn


class ReplayGuesser(Guesser):
    notes_key: str  # a key only this guesser's notes have: its presence means they are set up

    def start(self, *, seed: int) -> GuesserState:
        state = GuesserState(seed=seed)
        self._init_notes(state)
        return state

    @abstractmethod
    def _fresh_notes(self, state: GuesserState) -> dict:
        """The guesser's own notes for a game no turn of which is known yet."""

    @abstractmethod
    def _ask(self, state: GuesserState) -> Ask:
        """The next question of one game."""

    def ask_batch(self, states: Sequence[GuesserState]) -> list[Ask]:
        return [self._ask(state) for state in states]

    @abstractmethod
    def _learn(self, data: dict, turn: Turn, text: str, key: str) -> None:
        """Update the notes with one judged turn (`text` its question, `key` normalised)."""

    def _init_notes(self, state: GuesserState) -> dict:
        state.data.update(self._fresh_notes(state), asked_texts=set(), seen=0)
        return state.data

    def _notes(self, state: GuesserState) -> dict:
        data = state.data if self.notes_key in state.data else self._init_notes(state)
        while data["seen"] < len(state.history):  # turns appended without observe()
            self._update(data, state.history[data["seen"]])
            data["seen"] += 1
        return data

    def observe(self, state: GuesserState, turn: Turn) -> None:
        data = self._notes(state)
        super().observe(state, turn)
        self._update(data, turn)
        data["seen"] = len(state.history)

    def _update(self, data: dict, turn: Turn) -> None:
        text = turn.question if isinstance(turn.question, str) else ""
        key = rules.normalise_question(text)
        data["asked_texts"].add(key)
        self._learn(data, turn, text, key)


def posterior_of(log_w: np.ndarray, out: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
    """The posterior of log-weights `log_w` over the words, those `out` at zero; the prior's when
    every word is out (start afresh)."""
    log_w = np.where(out, -np.inf, log_w)
    if not np.isfinite(log_w).any():
        log_w = log_prior.copy()
    w = np.exp(log_w - log_w.max())
    return w / w.sum()
