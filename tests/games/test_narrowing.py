"""Candidate narrowing by the knowledge base, checked by hand on a four-word pool."""

from __future__ import annotations

import math

import pytest

from games.engine import reward_parts
from games.kb import load_kb
from games.kb.candidates import candidate_model
from games.kb.narrowing import consistent, game_bits, turn_bits
from games.rules import VERDICT_FEEDBACK
from games.types import GameConfig, Turn, Verdict

Y, N, F = Verdict.YES, Verdict.NO, Verdict.FINISHED
ANIMAL, VEHICLE = "Is it a kind of animal?", "Is it a kind of vehicle?"


def turn(index: int, question: str, verdict: Verdict) -> Turn:
    return Turn(
        index=index,
        question=question,
        verdict=verdict,
        feedback=VERDICT_FEEDBACK[verdict],
        reward=reward_parts(verdict, GameConfig()),
    )


@pytest.fixture(scope="module")
def model():
    return candidate_model(load_kb(), ["dog", "cat", "car", "apple"])


def test_each_answer_narrows_the_pool_and_a_win_takes_every_remaining_bit(model):
    game = [turn(0, ANIMAL, Y), turn(1, "Is it a cat?", N), turn(2, "Is it a dog?", F)]
    # 4 -> 2 (dog, cat) -> 1 (cat named and denied) -> won with log2(1) = 0 bits left to gain
    assert game_bits(model, game) == [(pytest.approx(1.0), 2), (pytest.approx(1.0), 1), (0.0, 0)]


def test_ruled_out_guesses_invalid_and_ungrounded_turns_gain_nothing(model):
    game = [
        turn(0, VEHICLE, N),
        turn(1, "Is it a car?", N),
        turn(2, "dog dog", Verdict.INVALID),
        turn(3, "Is it blorp?", Verdict.UNKNOWN),
        turn(4, ANIMAL, Y),
        turn(5, "Is it a dog?", F),
    ]
    bits = game_bits(model, game)
    assert [left for _, left in bits] == [3, 3, 3, 3, 2, 0]
    assert [b for b, _ in bits] == pytest.approx(
        [math.log2(4 / 3), 0.0, 0.0, 0.0, math.log2(3 / 2), 1.0]
    )
    # summed over a game: log2(pool) − log2(left at the end), whatever the order of the answers
    assert sum(b for b, _ in bits) == pytest.approx(2.0)


def test_turn_bits_leaves_the_mask_it_is_given_alone(model):
    before = consistent(model, [turn(0, ANIMAL, Y)])
    assert before.tolist() == [True, True, False, False]
    assert turn_bits(model, before, turn(1, "Is it a cat?", N)) == pytest.approx(1.0)
    assert before.tolist() == [True, True, False, False]
    assert turn_bits(model, before, turn(1, VEHICLE, N)) == 0.0  # no animal is a vehicle
