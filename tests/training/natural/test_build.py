"""The natural guesser's build: which reference questions enter the bank, how phrasings merge,
which answer columns are dropped as duplicates, and the pool and everyday lists' rules."""

from __future__ import annotations

import numpy as np
import pytest

from games.kb import load_kb
from training.natural.build import clean_question, pool_words, question_key, select_bank
from training.natural.everyday import everyday_words


@pytest.mark.parametrize(
    "question",
    [
        "Is it an animal?",
        "Is it typically found indoors?",
        "Can you hold it in your hand?",
        "Is it used for transportation?",
        "Is it a type of food?",
    ],
)
def test_natural_questions_are_kept(question):
    assert clean_question(question) == question


@pytest.mark.parametrize(
    "question",
    [
        "Is it a dog?",  # a guess of one plausible secret
        "Is it chemistry?",  # the same without an article
        'Is it "period"?',
        "Is it an animal or a plant?",  # two things
        "Is it black and white?",
        "Does its name start with the letter S?",  # spelling, not the thing
        "Is it a tool? Is it big?",  # two questions
        "Tell me if it is big?",  # not a yes/no form
        "It is big",
    ],
)
def test_other_questions_are_dropped(question):
    assert clean_question(question) is None


def test_fillers_merge_phrasings():
    assert question_key("Is it something typically found indoors?") == question_key(
        "Is it found indoors?"
    )
    assert question_key("Is it an animal?") != question_key("Is it a plant?")


def test_select_bank_drops_duplicate_and_constant_columns():
    rng = np.random.default_rng(0)
    a, b = rng.random(50), rng.random(50)
    p = np.stack([a, np.full(50, 0.3), a * 0.9 + 0.05, b, 1 - b], axis=1)
    assert select_bank(p, 10) == [0, 3, 4]  # a near copy and a constant are dropped
    assert select_bank(p, 2) == [0, 3]


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def test_pool_is_a_frequency_list_of_nouns(kb):
    pool = [w for w, _ in pool_words(kb)]
    assert len(pool) > 10_000 and len(set(pool)) == len(pool)
    assert pool.index("time") < pool.index("dog") < pool.index("hammer")
    assert "was" not in pool and "wa" not in pool  # a verb form that morphy reads as a noun


def test_everyday_words_are_frequent_concrete_nouns(kb):
    words = everyday_words(kb, 100)
    assert len(words) == 100 and {"car", "dog", "chair", "bottle"} <= set(words)
    assert not {"well", "young", "round", "time", "idea"} & set(words)


def test_the_everyday_validation_list_is_the_rules_next_words_and_no_test_word(kb):
    from games.wordlists import read_words

    shipped = read_words("everyday/everyday_val")
    test_words = set(read_words("dbrl/paper_test")) | set(read_words("everyday/everyday100"))
    assert shipped == everyday_words(
        kb, 200, skip=100, exclude=frozenset(read_words("dbrl/paper_test"))
    )
    assert len(shipped) == 200 and not set(shipped) & test_words
    assert "egg" not in shipped  # "eggs" is in everyday100
