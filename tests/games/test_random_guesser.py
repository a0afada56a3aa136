"""The random guesser: seeded, never repeats, asks only what the KB judge can ground."""

from __future__ import annotations

import pytest

from games import rules
from games.engine import TwentyQuestions
from games.guessers.random import RandomGuesser
from games.judges.kb import KBJudge
from games.kb import load_kb
from games.types import GameConfig, Verdict

POOL = [
    "dog",
    "cat",
    "car",
    "guitar",
    "apple",
    "bank",
    "violin",
    "wheel",
    "tree",
    "water",
    "hammer",
    "shoe",
]


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def play(guesser, judge, secret, seed, max_turns):
    env = TwentyQuestions(judge, GameConfig(max_turns=max_turns))
    env.reset(secret, seed)
    state = guesser.start(seed=seed)
    while not env.done:
        ask = guesser.ask(state)
        assert ask.extra["kind"] in ("guess", "question")
        guesser.observe(state, env.step(ask.question).turn)
    return env.trajectory


def test_never_repeats_and_is_always_grounded(kb):
    guesser, judge = RandomGuesser(kb, pool=POOL), KBJudge(kb, closed=True)
    for seed in range(5):
        trajectory = play(guesser, judge, "hammer", seed, max_turns=60)
        questions = [rules.normalise_question(t.question) for t in trajectory.turns]
        assert len(set(questions)) == len(questions)
        assert all(t.verdict is not Verdict.UNKNOWN for t in trajectory.turns)


def test_seeded(kb):
    guesser, judge = RandomGuesser(kb, pool=POOL), KBJudge(kb)
    first = [t.question for t in play(guesser, judge, "apple", 11, 15).turns]
    again = [t.question for t in play(guesser, judge, "apple", 11, 15).turns]
    other = [t.question for t in play(guesser, judge, "apple", 12, 15).turns]
    assert first == again and first != other


def test_guess_rate(kb):
    only_guesses = RandomGuesser(kb, pool=POOL, guess_rate=1.0)
    trajectory = play(only_guesses, KBJudge(kb), "shoe", 0, max_turns=len(POOL))
    assert trajectory.won  # guessing every pool word once must hit the secret
    never = RandomGuesser(kb, pool=POOL, guess_rate=0.0)
    state = never.start(seed=0)
    assert all(never.ask(state).extra["kind"] == "question" for _ in range(3))
    with pytest.raises(ValueError):
        RandomGuesser(kb, pool=POOL, guess_rate=1.5)
    with pytest.raises(ValueError, match="no word"):
        RandomGuesser(kb, pool=["flibbertigibbet"])
