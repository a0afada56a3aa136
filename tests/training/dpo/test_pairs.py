"""The DPO pair builder, checked by hand: candidates played as the next turn, the three proxy
rewards, chosen/rejected by the right reward, and the gap filter."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from games.guessers.base import Ask, Guesser, GuesserState
from games.judges.kb import KBJudge
from games.kb import load_kb
from games.kb.candidates import candidate_model
from games.llm.base import LLMBackend
from games.llm.chat import GuesserFormat, guesser_messages
from games.types import Verdict
from tests.training.sft.helpers import trajectory, turn
from training.dpo import pairs as P

Y, N, F = Verdict.YES, Verdict.NO, Verdict.FINISHED
POOL = ["dog", "cat", "car", "apple"]
ANIMAL, VEHICLE = "Is it a kind of animal?", "Is it a kind of vehicle?"


class Scripted(Guesser):
    """Asks `questions` in turn, whatever the game (one per call slot)."""

    name = "scripted"

    def __init__(self, questions: Sequence[str]):
        self.questions, self.asked = list(questions), 0

    def ask_batch(self, states: Sequence[GuesserState]) -> list[Ask]:
        out = []
        for _ in states:
            out.append(
                Ask(self.questions[self.asked % len(self.questions)], extra={"completion": "raw"})
            )
            self.asked += 1
        return out


class LengthBackend(LLMBackend):
    """log b = number of chat messages: every turn raises the belief by exactly 2."""

    def generate(self, chats, sampling, *, seeds=None):  # pragma: no cover - not used
        raise NotImplementedError

    def score_spans(self, chats, replies, spans):
        return [float(len(c)) for c in chats]


@pytest.fixture(scope="module")
def judge():
    return KBJudge()


@pytest.fixture(scope="module")
def model():
    return candidate_model(load_kb(), POOL)


@pytest.fixture
def branch(judge):
    """After "animal? yes" for the secret dog: a win, an informative-less no, a repeat, an
    invalid."""
    game = trajectory("dog", [(ANIMAL, Y), ("Is it a cat?", N), ("Is it a dog?", F)])
    policy = Scripted(["Is it a dog?", VEHICLE, ANIMAL, "dog dog dog"])
    (b,) = P.sample_candidates(policy, judge, [(game, 1)], n=4, max_turns=20, seed=0)
    return b


def test_candidates_are_judged_as_the_next_turn_of_the_game(branch):
    assert [c.turn.verdict for c in branch.candidates] == [F, N, Verdict.REPEATED, Verdict.INVALID]
    assert [c.turn.index for c in branch.candidates] == [1] * 4
    assert branch.candidates[3].text == "dog dog dog"  # the extracted question is what is trained
    assert branch.history[0].question == ANIMAL


def test_stored_verdicts_are_kept_not_rejudged(judge):
    # a human said "no" to animal for the secret dog: the history keeps it, re-asking is a repeat
    game = trajectory("dog", [(ANIMAL, N), ("Is it a dog?", F)])
    env = P.env_at(judge, game, 1, max_turns=20)
    assert env.trajectory.turns[0].verdict is N
    assert P.play_turns([env], [ANIMAL], judge)[0].verdict is Verdict.REPEATED


def test_information_gain_in_bits_by_hand(model):
    history = [turn(0, ANIMAL, Y)]  # dog, cat left of the pool
    assert P.consistent(model, history).tolist() == [True, True, False, False]
    assert P.info_gain(model, [], turn(0, ANIMAL, Y)) == pytest.approx(1.0)  # 4 -> 2 candidates
    assert P.info_gain(model, history, turn(1, VEHICLE, N)) == 0.0  # no animal is a vehicle
    assert P.info_gain(model, history, turn(1, "Is it a cat?", N)) == pytest.approx(
        1.0
    )  # names cat: out
    assert P.info_gain(model, history, turn(1, "Is it a dog?", F)) == pytest.approx(
        math.log2(2) + 1
    )
    assert P.info_gain(model, history, turn(1, "??", Verdict.INVALID)) == pytest.approx(-5.05)
    assert P.info_gain(model, history, turn(1, "Is it nice?", Verdict.UNKNOWN)) == pytest.approx(
        -0.05
    )


def test_pairs_take_the_best_and_the_worst_candidate(branch, model):
    P.score_infogain([branch], model)
    assert [round(c.reward, 2) for c in branch.candidates] == [2.0, 0.0, -1.05, -5.05]
    (pair,) = P.make_pairs([branch], GuesserFormat(), min_reward_gap=0.25)
    assert pair["chosen"] == [{"role": "assistant", "content": "Is it a dog?"}]
    assert pair["rejected"] == [{"role": "assistant", "content": "dog dog dog"}]
    assert pair["prompt"] == guesser_messages(branch.history)
    assert (pair["chosen_reward"], pair["rejected_reward"]) == pytest.approx((2.0, -5.05))
    assert (pair["chosen_verdict"], pair["rejected_verdict"], pair["turn"]) == (
        "finished",
        "invalid",
        1,
    )


def test_gap_filter_and_identical_texts(branch):
    for c, r in zip(branch.candidates, [0.3, 0.2, 0.1, 0.0]):
        c.reward = r
    assert P.make_pairs([branch], GuesserFormat(), min_reward_gap=0.31) == []
    assert len(P.make_pairs([branch], GuesserFormat(), min_reward_gap=0.3)) == 1
    for c in branch.candidates:
        c.reward = 1.0  # all equal: no preference
    assert P.make_pairs([branch], GuesserFormat(), min_reward_gap=0.0) == []
    branch.candidates[0].reward, branch.candidates[1].text = 2.0, branch.candidates[0].text
    branch.candidates[1].reward = 0.0  # the worst says the same as the best
    branch.candidates[2].reward = branch.candidates[3].reward = 1.0
    assert P.make_pairs([branch], GuesserFormat(), min_reward_gap=0.0) == []


def test_success_reward_is_the_mean_return_of_continued_games(branch, judge):
    P.score_success(
        [branch], Scripted(["Is it a dog?"]), judge, continuations=2, max_turns=20, seed=0
    )
    win_now, then_win = 2.0 - 0.05, -0.05 + 2.0 - 0.05
    assert [round(c.reward, 2) for c in branch.candidates] == [
        round(win_now, 2),
        round(then_win, 2),
        round(-1.05 + win_now, 2),
        round(-5.05 + win_now, 2),
    ]


def test_belief_reward_is_delta_belief_plus_the_engine_reward(branch):
    P.score_belief([branch], LengthBackend(), GuesserFormat())
    assert all(c.turn.delta_belief == 2.0 for c in branch.candidates)
    assert [c.reward for c in branch.candidates] == pytest.approx(
        [2 + 1.95, 2 - 0.05, 2 - 1.05, 2 - 5.05]
    )


def test_history_prefixes():
    game = trajectory("dog", [(ANIMAL, Y), (VEHICLE, N), ("Is it a cat?", N), ("Is it a dog?", F)])
    assert P.history_prefixes([game], 0, seed=0) == [(game, t) for t in range(4)]
    picked = P.history_prefixes([game], 2, seed=0)
    assert len(picked) == 2 and picked[0][1] < picked[1][1]
    assert picked == P.history_prefixes([game], 2, seed=0)  # seeded


def test_candidate_stats(branch, model):
    P.score_infogain([branch], model)
    stats = P.candidate_stats([branch])
    assert stats["candidates/invalid_rate"] == 0.25 and stats["candidates/win_rate"] == 0.25
    assert stats["candidates/answered_rate"] == 0.5 and stats["candidates/distinct_fraction"] == 1.0
    assert stats["candidates/reward_gap_mean"] == pytest.approx(7.05)
