"""bench.learning's game statistics: which turns are guesses, and whether a guess was consistent."""

from __future__ import annotations

from collections.abc import Sequence

from bench.learning import consistency, guess_questions, summarise_games
from games.guessers.base import Ask, Guesser, GuesserState
from games.judges.kb import KBJudge
from games.rollout import rollout
from games.types import GameConfig

POOL = ("dog", "cat", "being", "apple", "table")


class Scripted(Guesser):
    name = "scripted"

    def __init__(self, questions: dict[int, list[str]]):
        self.questions = questions

    def ask_batch(self, states: Sequence[GuesserState]) -> list[Ask]:
        return [
            Ask(self.questions[s.seed][min(len(s.history), len(self.questions[s.seed]) - 1)])
            for s in states
        ]


def test_a_pool_word_that_is_a_category_of_others_is_not_a_guess():
    # "being" is in the pool, but "Is it a being?" is answered yes for dog and cat: a category
    # question
    assert guess_questions(POOL) == {
        "is it a dog",
        "is it a cat",
        "is it a table",
        "is it an apple",
    }


def test_guesses_are_checked_against_the_words_the_answers_allow():
    script = {
        0: ["Is it a being?", "Is it a table?", "Is it a cat?", "Is it a dog?"],
        1: ["Is it a being?", "Is it a dog?", "Is it a kind of animal?"],
    }
    games = rollout(
        Scripted(script), KBJudge(), ["dog", "apple"], seeds=[0, 1], config=GameConfig(max_turns=4)
    )
    assert [t.verdict.value for t in games[0].turns] == ["yes", "no", "no", "finished"]
    assert [t.verdict.value for t in games[1].turns] == ["yes", "no", "no", "repeated"]
    seen = consistency(games, POOL, guess_questions(POOL))
    # after "being? yes" the KB leaves dog, cat and apple: "table" contradicts the answers, the
    # rest do not
    assert seen == {
        "left": [1, 1],
        "at_first_guess": [3, 3],
        "consistent": [False, True, True, True],
    }
    summary = summarise_games(games, POOL)
    assert summary["guesses_consistent_with_answers"]["rate"] == 0.75
    assert summary["mean_first_guess_turn"] == 2 and summary["pool_guess_rate"] == 4 / 8
    assert summary["success"]["rate"] == 0.5 and summary["reached_2_candidates"]["rate"] == 1.0


def test_lost_games_are_split_by_whether_the_answers_had_singled_the_secret_out():
    script = {
        0: [
            "Is it a being?",
            "Is it a dog?",
            "Is it a kind of animal?",
        ],  # only apple is left: lost on naming
        1: ["Is it a dog?"],  # cat, being, apple and table are left: lost on narrowing
        2: ["Is it a cat?"],
    }  # won
    games = rollout(
        Scripted(script),
        KBJudge(),
        ["apple", "table", "cat"],
        seeds=[0, 1, 2],
        config=GameConfig(max_turns=3),
    )
    assert [g.won for g in games] == [False, False, True]
    summary = summarise_games(games, POOL)
    assert summary["singled_out_secret"]["rate"] == round(2 / 3, 4)
    assert (
        summary["lost_with_secret_singled_out"]["rate"] == 0.5
        and summary["lost_with_secret_singled_out"]["n"] == 2
    )
