"""The natural guesser (issue 33) on a small matrix: it finds every word answered as its model
expects, survives a surprising answer, learns nothing from "I don't know", guesses one thing when
sure and never repeats; the registry builds it; the shipped data file is small and sound."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from games import rules
from games.engine import TwentyQuestions
from games.guessers.natural import DEFAULT_DATA, NaturalGuesser, guess_text, save_data
from games.judges.base import Judge, JudgeRequest
from games.registry import SpecError, build_guesser
from games.types import GameConfig, JudgeAnswer, Turn, Verdict

STRICT = GameConfig(win_rule="strict")

WORDS = ["dog", "cat", "horse", "apple", "banana", "hammer", "chair", "car", "bicycle", "oak"]
# fmt: off
TABLE = {  # question: the words a person answers yes for
    "Is it an animal?": {"dog", "cat", "horse"},
    "Is it alive?": {"dog", "cat", "horse", "apple", "banana", "oak"},
    "Is it a type of food?": {"apple", "banana"},
    "Is it yellow?": {"banana"},
    "Is it a tool?": {"hammer"},
    "Does it have wheels?": {"car", "bicycle"},
    "Does it have an engine?": {"car"},
    "Is it used for sitting?": {"chair", "horse", "bicycle"},
    "Is it a pet?": {"dog", "cat"},
    "Does it bark?": {"dog"},
    "Is it bigger than a person?": {"horse", "car", "oak"},
    "Is it a plant?": {"oak", "apple", "banana"},
}
# fmt: on
QUESTIONS = list(TABLE)


def table_p(sharp: float = 0.95) -> np.ndarray:
    p = np.full((len(WORDS), len(QUESTIONS)), 1 - sharp)
    for j, q in enumerate(QUESTIONS):
        for i, w in enumerate(WORDS):
            if w in TABLE[q]:
                p[i, j] = sharp
    return p


@pytest.fixture(scope="module")
def data_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("natural") / "small.npz"
    return save_data(path, questions=QUESTIONS, words=WORDS, p_yes=table_p())


@pytest.fixture(scope="module")
def guesser(data_path) -> NaturalGuesser:
    return NaturalGuesser(data_path, guess_threshold=0.6)


class TableJudge(Judge):
    """Answers as the table says; `lies` flips the answer to those questions."""

    def __init__(self, lies: Sequence[str] = (), unknown: Sequence[str] = ()):
        self.lies, self.unknown = set(lies), set(unknown)

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        out = []
        for r in requests:
            if r.question in self.unknown:
                out.append(JudgeAnswer(Verdict.UNKNOWN))
                continue
            yes = r.secret in TABLE.get(r.question, set())
            yes ^= r.question in self.lies
            out.append(JudgeAnswer(Verdict.YES if yes else Verdict.NO))
        return out


def turn(index: int, question: str, verdict: Verdict) -> Turn:
    return Turn(index, question, verdict, rules.feedback(verdict))


def play(guesser, judge, secret, seed=0, max_turns=20):
    env = TwentyQuestions(judge, GameConfig(max_turns=max_turns, win_rule="strict"))
    env.reset(secret, seed)
    state, asks = guesser.start(seed=seed), []
    state.data["win_rule"] = "strict"
    while not env.done:
        ask = guesser.ask(state)
        asks.append(ask)
        guesser.observe(state, env.step(ask.question).turn)
    return env.trajectory, asks


@pytest.mark.parametrize("secret", WORDS)
def test_finds_every_word_answered_as_expected(guesser, secret):
    trajectory, asks = play(guesser, TableJudge(), secret)
    assert trajectory.turns[-1].verdict is Verdict.FINISHED, [a.question for a in asks]
    assert len(trajectory.turns) <= 8
    questions = [rules.normalise_question(t.question) for t in trajectory.turns]
    assert len(set(questions)) == len(questions)  # never repeats itself
    guesses = [a for a in asks if a.extra["kind"] == "guess"]
    assert guesses[-1].question == guess_text(secret)


def test_one_surprising_answer_costs_turns_not_the_game(guesser):
    plain, _ = play(guesser, TableJudge(), "dog")
    first = plain.turns[0].question
    lied, asks = play(guesser, TableJudge(lies=[first]), "dog")
    assert lied.turns[-1].verdict is Verdict.FINISHED, [a.question for a in asks]
    assert len(lied.turns) > len(plain.turns)


def test_a_hard_update_would_lose_the_game(data_path):
    """The same lie against a guesser with (almost) no noise floor: the secret is ruled out."""
    strict = NaturalGuesser(data_path, noise=1e-9, guess_threshold=0.6)
    first = play(strict, TableJudge(), "dog")[0].turns[0].question
    lied, _ = play(strict, TableJudge(lies=[first]), "dog", max_turns=6)
    assert lied.turns[-1].verdict is not Verdict.FINISHED


def test_dont_know_changes_nothing(guesser):
    state = guesser.start(seed=1)
    before = guesser.posterior(state).copy()
    guesser.observe(state, turn(0, "Is it an animal?", Verdict.UNKNOWN))
    assert np.array_equal(guesser.posterior(state), before)
    guesser.observe(state, turn(1, "Is it an animal?", Verdict.YES))
    after = guesser.posterior(state)
    assert after[WORDS.index("dog")] > before[WORDS.index("dog")]
    assert after[WORDS.index("hammer")] < before[WORDS.index("hammer")]


def test_answers_are_soft(guesser):
    state = guesser.start(seed=2)
    guesser.observe(state, turn(0, "Is it an animal?", Verdict.NO))
    p = guesser.posterior(state)
    assert 0 < p[WORDS.index("dog")] < p[WORDS.index("hammer")]


def test_a_wrong_guess_is_out_and_a_sure_word_is_guessed(guesser):
    state = guesser.start(seed=3)
    for i, (q, v) in enumerate([("Is it an animal?", Verdict.YES), ("Is it a pet?", Verdict.YES)]):
        guesser.observe(state, turn(i, q, v))
    guesser.observe(state, turn(2, "Is it a dog?", Verdict.NO))
    assert guesser.posterior(state)[WORDS.index("dog")] == 0
    ask = guesser.ask(state)
    assert ask.question == "Is it a cat?" and ask.extra["kind"] == "guess"
    assert ask.top_candidates[0][0] == "cat"


def test_the_last_turns_guess(data_path):
    g = NaturalGuesser(data_path, guess_threshold=1.0, final_guesses=2, max_turns=3)
    state = g.start(seed=0)
    assert g.ask(state).extra["kind"] == "question"
    g.observe(state, turn(0, g.ask(state).question, Verdict.YES))
    assert g.ask(state).extra["kind"] == "guess"


def test_temperature_varies_the_opening_by_seed(data_path):
    g = NaturalGuesser(data_path, temperature=1.0)
    openings = {g.ask(g.start(seed=s)).question for s in range(12)}
    assert len(openings) > 1
    assert g.ask(g.start(seed=5)).question == g.ask(g.start(seed=5)).question
    plain = NaturalGuesser(data_path)
    assert len({plain.ask(plain.start(seed=s)).question for s in range(5)}) == 1


def test_registry_builds_it_with_settings(data_path):
    g = build_guesser(f"natural:{data_path}")
    assert isinstance(g, NaturalGuesser) and g.words == WORDS
    with pytest.raises(SpecError):
        build_guesser("natural:loudness=3")
    with pytest.raises(SpecError):
        build_guesser("natural:noise=much")


def test_the_shipped_data_is_small_and_sound():
    assert DEFAULT_DATA.stat().st_size < 15 * 2**20
    with np.load(DEFAULT_DATA, allow_pickle=False) as f:
        assert f["p_yes"].dtype == np.uint8
        assert f["p_yes"].shape == (len(f["words"]), len(f["questions"]))
        questions, words = [str(q) for q in f["questions"]], {str(w) for w in f["words"]}
    assert len(questions) >= 500 and len(words) >= 10_000
    assert {"dog", "apple", "hammer", "chair"} <= words
    assert len({rules.normalise_question(q) for q in questions}) == len(questions)
    for q in questions:
        assert rules.guessed_word(q) is None, q  # no guess of one plausible secret
        assert " or " not in q.lower(), q
        assert rules.syntax_error(q, STRICT) is None, q


def test_the_games_length_comes_from_the_state(data_path):
    g = NaturalGuesser(data_path, guess_threshold=1.0, final_guesses=1, max_turns=20)
    state = g.start(seed=0)
    state.data["max_turns"] = 1
    assert g.ask(state).extra["kind"] == "guess"
