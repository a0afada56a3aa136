"""Naming examples: histories that single a pool word out, answered as the KB judge answers."""

from __future__ import annotations

import pytest

from games.judges.kb import KBJudge
from games.kb import load_kb
from games.kb.candidates import candidate_model
from games.kb.narrowing import consistent
from games.llm.chat import GuesserFormat
from games.types import Verdict
from training.knowledge.naming import naming_examples, naming_histories

POOL = [
    "poodle",
    "apple",
    "car",
    "freedom",
    "hammer",
    "violin",
    "salmon",
    "oak",
    "river",
    "doctor",
    "bread",
    "chair",
]


@pytest.fixture(scope="module")
def histories():
    return naming_histories(load_kb(), POOL, per_word=3, max_turns=20, temperature=0.1, seed=0)


def test_every_word_gets_its_histories_and_its_guess(histories):
    assert sorted({w for w, _, _ in histories}) == sorted(POOL)
    assert len(histories) == 3 * len(POOL)
    for word, _, guess in histories:
        assert guess == f"Is it {'an' if word[0] in 'aeiou' else 'a'} {word}?"


def test_answers_are_the_kb_judges_and_single_the_word_out(histories):
    judge, model = KBJudge(closed=True), candidate_model(load_kb(), POOL)  # the KB's closed world
    for word, history, _ in histories:
        assert 1 <= len(history) < 19
        for turn in history:
            assert judge.answer(word, turn.question).verdict is turn.verdict
            assert turn.verdict in (Verdict.YES, Verdict.NO)
        assert len({t.question for t in history}) == len(history)
        left = consistent(model, history)
        assert [model.words[i] for i in left.nonzero()[0]] == [word]


def test_same_seed_same_histories_other_seed_others(histories):
    again = naming_histories(load_kb(), POOL, per_word=3, temperature=0.1, seed=0)
    other = naming_histories(load_kb(), POOL, per_word=3, temperature=0.1, seed=1)
    questions = lambda hs: [[t.question for t in h] for _, h, _ in hs]  # noqa: E731
    assert questions(again) == questions(histories)
    assert questions(other) != questions(histories)


def test_a_low_temperature_asks_fewer_questions():
    kb = load_kb()

    def mean(t):
        lengths = [len(h) for _, h, _ in naming_histories(kb, POOL, per_word=4, temperature=t)]
        return sum(lengths) / (4 * len(POOL))

    assert mean(0.02) < mean(2.0)


def test_examples_are_chats_whose_completion_is_only_the_guess():
    fmt = GuesserFormat(max_turns=20)
    rows = naming_examples(load_kb(), POOL[:2], chat_format=fmt, per_word=1, seed=0)
    for row in rows:
        assert row["completion"] == [
            {
                "role": "assistant",
                "content": f"Is it a{'n' if row['secret'][0] in 'aeiou' else ''} {row['secret']}?",
            }
        ]
        assert row["prompt"][-1]["role"] == "user" and row["prompt"][-1]["content"] in (
            "Yes.",
            "No.",
        )
        assert sum(m["role"] == "assistant" for m in row["prompt"]) == row["turn"]


def test_temperature_must_be_positive():
    with pytest.raises(ValueError, match="temperature"):
        naming_histories(load_kb(), POOL, temperature=0)


def test_word_rows_leave_the_guess_opening_untrained():
    kb = load_kb()
    guess = naming_examples(kb, POOL[:2], per_word=1, seed=0)
    word = naming_examples(kb, POOL[:2], per_word=1, seed=0, train="word")
    assert [r["completion"] for r in word] == [
        r["completion"] for r in guess
    ]  # same histories and guesses
    assert all(
        r["untrained_prefix"] == "Is it" and r["completion"][0]["content"].startswith("Is it ")
        for r in word
    )
    assert not any("untrained_prefix" in r for r in guess)
    with pytest.raises(ValueError, match="train"):
        naming_examples(kb, POOL[:2], per_word=1, train="question")


def test_rows_for_some_words_single_them_out_among_the_whole_pool():
    kb = load_kb()
    some = naming_histories(
        kb, POOL, per_word=2, temperature=0.1, seed=0, words=["poodle", "salmon"]
    )
    assert sorted({w for w, _, _ in some}) == ["poodle", "salmon"] and len(some) == 4
    whole = candidate_model(kb, POOL)
    for word, history, _ in some:
        assert [whole.words[i] for i in consistent(whole, history).nonzero()[0]] == [word]
    # among the two words alone one question would do; among the pool it takes more
    alone_histories = naming_histories(
        kb, ["poodle", "salmon"], per_word=2, temperature=0.1, seed=0
    )
    assert all(len(h) == 1 for _, h, _ in alone_histories)
    assert sum(len(h) for _, h, _ in some) > sum(len(h) for _, h, _ in alone_histories)
    with pytest.raises(ValueError, match="outside the pool: unicorn"):
        naming_histories(kb, POOL, words=["poodle", "unicorn"])
    rows = naming_examples(kb, POOL, per_word=1, seed=0, words=["oak"])
    assert [r["secret"] for r in rows] == ["oak"]
