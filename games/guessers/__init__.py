"""Guessers (questioners). `build_guesser(spec)` lives in games.registry."""

from games.guessers.base import Ask, Guesser, GuesserState

__all__ = ["Ask", "Guesser", "GuesserState"]
