"""The information-gain guesser: its model agrees with the KB judge, it wins KB-judged games,
never repeats, survives odd answers, reports its posterior and is deterministic per seed."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import games
from games import rules
from games.engine import TwentyQuestions
from games.guessers.infogain import InfoGainGuesser
from games.judges.base import Judge, JudgeRequest
from games.judges.kb import KBJudge
from games.kb import load_kb
from games.kb.wordlists import dbrl_words
from games.types import GameConfig, JudgeAnswer, Turn, Verdict

GAMES_SOURCE = f"{Path(games.__file__).parent}/"  # where the games package is imported from


@pytest.fixture(scope="module")
def kb():
    return load_kb()


@pytest.fixture(scope="module")
def pool(kb):
    return [w for w in dbrl_words("val") if kb.lookup(w) is not None]  # 238 words


@pytest.fixture(scope="module")
def guesser(kb, pool):
    return InfoGainGuesser(kb, pool=pool)


class FixedJudge(Judge):
    """Always gives the same verdict (a lying or clueless answerer)."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict
        self.name = f"always-{verdict.value}"

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        return [JudgeAnswer(self.verdict) for _ in requests]


def play(guesser, judge, secret, seed, max_turns=20):
    env = TwentyQuestions(judge, GameConfig(max_turns=max_turns))
    env.reset(secret, seed)
    state, asks = guesser.start(seed=seed), []
    while not env.done:
        ask = guesser.ask(state)
        asks.append(ask)
        guesser.observe(state, env.step(ask.question).turn)
    return env.trajectory, asks


def test_the_model_predicts_the_kb_judge(kb, guesser, pool):
    """For any pool word and question, the closed-world judge answers as the model says
    (yes/no/named); the open-world one the same, but unknown for an absent sparse fact or a
    category the taxonomy cannot vouch for (games.kb.gaps)."""
    judge, open_judge, model = KBJudge(kb, closed=True), KBJudge(kb), guesser.model
    rng = np.random.default_rng(0)
    yes = model.yes.toarray().astype(bool)
    named = model.named.toarray().astype(bool)
    for candidate, q in zip(
        rng.integers(0, len(model.words), 3000), rng.integers(0, len(model.questions), 3000)
    ):
        secret, question = model.words[candidate], model.questions[q]
        if rules.names_secret(question, secret):
            assert named[candidate, q], (secret, question)
            continue
        assert not named[candidate, q], (secret, question)
        verdict = judge.judge(secret, question).verdict
        assert verdict is (Verdict.YES if yes[candidate, q] else Verdict.NO), (secret, question)
        feature = int(model.question_feature[q])
        vouched = kb.features[feature].startswith("isa:") and open_judge.vouches_no(
            kb.lookup(secret), feature
        )
        expected = verdict if verdict is Verdict.YES or vouched else Verdict.UNKNOWN
        assert open_judge.judge(secret, question).verdict is expected, (secret, question)


def test_unknown_to_a_grounded_question_counts_against_candidates_with_the_fact(kb, guesser):
    """The open-world KB judge says unknown exactly where it stores no such fact, so the guesser
    plays it as well as the closed-world judge: the same questions, the same outcomes."""
    state = guesser.start(seed=0)
    question = "Does it have a wheel?"
    yes, _ = guesser.model.outcome_masks(question)
    assert 0 < yes.sum() < len(yes)
    before = guesser.posterior(state)
    guesser.observe(state, Turn(index=0, question=question, verdict=Verdict.UNKNOWN, feedback=""))
    after = guesser.posterior(state)
    assert after[yes].sum() < 0.01 * before[yes].sum()
    assert guesser.ask(state).candidates_left == int((~yes).sum())
    for secret in ("violin", "carrot", "bicycle"):
        closed_game, _ = play(guesser, KBJudge(kb, closed=True), secret, seed=4)
        open_game, _ = play(guesser, KBJudge(kb), secret, seed=4)
        assert [t.question for t in open_game.turns] == [t.question for t in closed_game.turns]
        assert open_game.won == closed_game.won
        assert any(t.verdict is Verdict.UNKNOWN for t in open_game.turns) or secret == "violin"


def test_wins_kb_judged_games_without_repeats_or_unknowns(kb, guesser, pool):
    judge = KBJudge(kb, closed=True)
    wins = 0
    for seed, secret in enumerate(pool[::8]):
        trajectory, asks = play(guesser, judge, secret, seed)
        wins += trajectory.won
        verdicts = [t.verdict for t in trajectory.turns]
        assert Verdict.UNKNOWN not in verdicts and Verdict.REPEATED not in verdicts
        questions = [rules.normalise_question(t.question) for t in trajectory.turns]
        assert len(set(questions)) == len(questions)
        left = [a.candidates_left for a in asks]
        assert left[0] == len(guesser.model.words) and all(
            a >= b >= 1 for a, b in zip(left, left[1:])
        )
        for ask in asks:
            probabilities = [p for _, p in ask.top_candidates]
            assert 1 <= len(ask.top_candidates) <= 5 and probabilities == sorted(
                probabilities, reverse=True
            )
            assert sum(probabilities) <= 1 + 1e-9
        if trajectory.won:  # the model saw the chance that the winning question names the secret
            assert asks[-1].extra["p_win"] > 0
    assert wins / len(pool[::8]) >= 0.9


def test_posterior_concentrates_on_the_secret(kb, guesser, pool):
    secret = pool[10]
    trajectory, asks = play(guesser, KBJudge(kb), secret, seed=1)
    assert trajectory.won and asks[-1].candidates_left <= 3
    assert secret in [w for w, _ in asks[-1].top_candidates]


def test_same_seed_same_game_and_seeds_break_ties(kb, guesser, pool):
    judge = KBJudge(kb)
    first, _ = play(guesser, judge, pool[5], seed=7)
    again, _ = play(guesser, judge, pool[5], seed=7)
    assert [t.question for t in first.turns] == [t.question for t in again.turns]
    assert not np.array_equal(
        guesser.start(seed=1).data["jitter"], guesser.start(seed=2).data["jitter"]
    )


@pytest.mark.parametrize("verdict", [Verdict.NO, Verdict.YES, Verdict.UNKNOWN])
def test_inconsistent_or_useless_answers_do_not_break_it(guesser, pool, verdict):
    trajectory, asks = play(guesser, FixedJudge(verdict), pool[0], seed=0, max_turns=40)
    questions = [rules.normalise_question(t.question) for t in trajectory.turns]
    assert len(questions) == 40 or trajectory.won
    assert len(set(questions)) == len(questions)
    assert all(a.top_candidates for a in asks)
    if verdict is Verdict.NO:  # "no" to everything contradicts every candidate at some point
        assert asks[-1].candidates_left == 0


def test_invalid_repeated_and_ungrounded_unknown_turns_carry_no_information(guesser):
    state = guesser.start(seed=3)
    ask = guesser.ask(state)
    for verdict in (Verdict.INVALID, Verdict.REPEATED):
        guesser.observe(
            state,
            Turn(index=len(state.history), question=ask.question, verdict=verdict, feedback=""),
        )
    guesser.observe(
        state, Turn(index=2, question="Can it fly?", verdict=Verdict.UNKNOWN, feedback="")
    )
    after = guesser.ask(state)
    assert after.candidates_left == ask.candidates_left
    assert rules.normalise_question(after.question) != rules.normalise_question(ask.question)


def test_history_appended_without_observe_is_taken_into_account(kb, guesser):
    observed, appended = guesser.start(seed=4), guesser.start(seed=4)
    ask = guesser.ask(observed)
    verdict = KBJudge(kb).judge("cello", ask.question).verdict
    turn = Turn(index=0, question=ask.question, verdict=verdict, feedback="")
    guesser.observe(observed, turn)
    appended.history.append(turn)
    a, b = guesser.ask(observed), guesser.ask(appended)
    assert (a.question, a.candidates_left) == (b.question, b.candidates_left)
    assert a.candidates_left < ask.candidates_left


def test_free_text_questions_from_a_human_are_understood(guesser):
    state = guesser.start(seed=5)
    guesser.observe(state, Turn(0, "so... is it an ANIMAL??", Verdict.YES, ""))
    guesser.observe(state, Turn(1, "Can it fly?", Verdict.NO, ""))  # not groundable: ignored
    ask = guesser.ask(state)
    animals = sum(
        guesser.kb.holds(n, guesser.kb.feature_index["isa:animal"]) for n in guesser.model.nouns
    )
    assert ask.candidates_left == animals


def test_last_turn_is_a_guess_of_the_likeliest_word(kb, pool):
    guesser = InfoGainGuesser(kb, pool=pool, max_turns=1)
    ask = guesser.ask(guesser.start(seed=0))
    assert ask.extra["kind"] == "guess" and ask.question == (
        f"Is it {'an' if ask.top_candidates[0][0][0] in 'aeiou' else 'a'} "
        f"{ask.top_candidates[0][0]}?"
    )


def test_a_smaller_guess_bonus_guesses_later_and_still_wins(kb, pool):
    """The bonus for a guess's chance to win sets how many candidates are left when the guesser
    first names a word (with four equally likely words, naming one scores 0.81 + bonus/4 bits
    against a 2/2 split's 1): a lower bonus narrows further first (bench.learning's SFT teacher
    uses 0.5) and loses no game."""
    judge = KBJudge(kb)
    left = {}
    for bonus in (1.0, 0.5):
        guesser = InfoGainGuesser(kb, pool=pool, guess_bonus=bonus)
        model = guesser.model
        is_category = (
            np.asarray(model.yes.sum(axis=0)).ravel() > 0
        )  # "Is it a being?" asks about every being
        names = {model.questions[q] for q in model.guess_question if q >= 0 and not is_category[q]}
        left[bonus] = []
        for i, secret in enumerate(pool[:40]):
            trajectory, asks = play(guesser, judge, secret, seed=i)
            assert trajectory.won, (bonus, secret)
            # (a question that names the secret otherwise, "Is it related to college?", also wins)
            left[bonus].append(
                next(
                    (a.candidates_left for a in asks if a.question in names),
                    asks[-1].candidates_left,
                )
            )
    assert left[1.0].count(4) >= 5 and left[0.5].count(4) <= left[1.0].count(4) / 2
    assert np.mean(left[0.5]) < np.mean(left[1.0]) - 0.2


def test_pool_handling_and_options(kb):
    guesser = InfoGainGuesser(
        kb, pool=["Dog", "dog", "dogs", "cat", "flibbertigibbet", "mouse", "mice"]
    )
    assert guesser.model.words == ["dog", "dogs", "cat", "mouse", "mice"]
    assert guesser.model.skipped == ["flibbertigibbet"]
    trajectory, _ = play(guesser, KBJudge(kb), "mice", seed=0)
    assert trajectory.won  # "mouse" is not the secret's name: the guesser must say "mice"
    with pytest.raises(ValueError, match="no word"):
        InfoGainGuesser(kb, pool=["flibbertigibbet"])
    with pytest.raises(ValueError, match="prior"):
        InfoGainGuesser(kb, pool=["dog"], prior="zipf")
    with pytest.raises(ValueError, match="sense mode"):
        InfoGainGuesser(kb, pool=["dog"], sense="most")
    frequent = InfoGainGuesser(kb, pool=["dog", "aardvark"], prior="frequency")
    top = frequent.ask(frequent.start(seed=0)).top_candidates
    assert top[0][0] == "dog" and top[0][1] > top[1][1]


def test_any_sense_guesser_wins_against_the_any_sense_judge(kb, pool):
    guesser = InfoGainGuesser(kb, pool=pool, sense="any")
    assert guesser.name == "infogain-any"
    judge = KBJudge(kb, sense="any", closed=True)
    trajectory, asks = play(guesser, judge, "bank" if "bank" in pool else pool[3], seed=2)
    assert trajectory.won and all(t.verdict is not Verdict.UNKNOWN for t in trajectory.turns)


def outcomes_of(model) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per question of a candidate model: the candidates the KB judge says yes for, and those it
    names (its outcome masks, checked against the judge above), as indices."""
    return [tuple(map(np.flatnonzero, model.outcome_masks(text))) for text in model.questions]


def reference_choice(guesser, state, outcomes) -> tuple[str, float, float]:
    """The guesser's next question from its definition, one question at a time in Python: the
    most expected information (the entropy of finished / yes / no under the posterior) plus the
    guess bonus times the chance of finishing, asked and useless questions left out; with its
    information and chance of winning."""
    p, data = guesser.posterior(state), state.data
    best = (-math.inf, "", 0.0, 0.0)
    for q, (text, (yes, named)) in enumerate(zip(guesser.model.questions, outcomes)):
        if data["asked"][q]:
            continue
        p_yes, p_named = float(p[yes].sum()), float(p[named].sum())
        info = -sum(x * math.log2(x) for x in (p_yes, 1.0 - p_yes - p_named, p_named) if x > 0)
        if info < 1e-9 and p_named <= 0:
            continue
        score = info + guesser.guess_bonus * p_named + data["jitter"][q]
        best = max(best, (score, text, info, p_named))
    return best[1:]


def python_lines(call) -> tuple[object, int]:
    """call()'s result and how many lines of the games package's Python it ran (sys.settrace
    line events; numpy's and scipy's own Python left out, which varies by version): the work a
    decision does, counted the same on a fast machine and a loaded one."""
    lines, previous = 0, sys.gettrace()

    def trace(frame, event, arg):
        nonlocal lines
        lines += event == "line" and frame.f_code.co_filename.startswith(GAMES_SOURCE)
        return trace

    sys.settrace(trace)
    try:
        return call(), lines
    finally:
        sys.settrace(previous)


def test_decisions_over_a_5000_word_pool_score_every_question_at_once(kb):
    """Over 5,000 candidates (and over 16,000 questions) a decision is the reference's, found
    without Python work per candidate or per question: 75 lines of the guesser's Python a turn,
    where a loop over either would run thousands. How fast that is (about 1-2 ms a decision) is
    measured, not asserted: `python -m bench.kb` prints it (guesser_5000_pool: ms_per_decision)."""
    words = [kb.nouns[i] for i in np.argsort(-kb.noun_zipf, kind="stable")[:5000]]
    guesser = InfoGainGuesser(kb, pool=words)
    assert len(guesser.model.words) == 5000 and len(guesser.model.questions) > 5000
    env = TwentyQuestions(KBJudge(kb, closed=True))
    env.reset(words[1234], 0)  # "steps": near the end the posterior narrows to a few candidates
    state, outcomes = guesser.start(seed=0), outcomes_of(guesser.model)
    while not env.done:
        ask, lines = python_lines(lambda: guesser.ask(state))
        assert 0 < lines < 500, (len(state.history), lines)
        assert ask.candidates_left == 5000 or state.history
        if len(state.history) == guesser.max_turns - 1:  # the last: a guess, no information
            assert ask.extra["kind"] == "guess"
        else:  # from the whole pool to the few candidates left (the guesser then sums over those)
            question, info, p_win = reference_choice(guesser, state, outcomes)
            assert ask.question == question, len(state.history)
            assert ask.extra["info_bits"] == pytest.approx(info, abs=1e-9)
            assert ask.extra["p_win"] == pytest.approx(p_win, abs=1e-9)
        guesser.observe(state, env.step(ask.question).turn)
    assert len(state.history) == guesser.max_turns  # "steps" is never named: 20 turns checked


def test_a_warm_questioner_draws_worse_questions_the_same_way_for_a_seed(kb, pool):
    """temperature T > 0: questions drawn with weight exp(score / T), seeded by game and turn; the
    best-question guesser asks in fewer turns (measured on 30 secrets: 8.5 turns cold, 17.5 at
    T = 0.2)."""
    judge = KBJudge(kb, closed=True)
    cold, warm = InfoGainGuesser(kb, pool=pool), InfoGainGuesser(kb, pool=pool, temperature=0.2)
    turns = {"cold": [], "warm": []}
    for i, secret in enumerate(pool[:30]):
        for name, guesser in (("cold", cold), ("warm", warm)):
            trajectory, _ = play(guesser, judge, secret, seed=i, max_turns=40)
            assert trajectory.won
            turns[name].append(trajectory.n_turns)
    assert np.mean(turns["warm"]) > np.mean(turns["cold"]) + 2
    first, _ = play(warm, judge, pool[3], seed=11)
    again, _ = play(warm, judge, pool[3], seed=11)
    other, _ = play(warm, judge, pool[3], seed=12)
    assert (
        [t.question for t in first.turns]
        == [t.question for t in again.turns]
        != [t.question for t in other.turns]
    )
    with pytest.raises(ValueError, match="temperature"):
        InfoGainGuesser(kb, pool=pool, temperature=-1)
