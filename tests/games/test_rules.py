"""The rule checks and the win rules (games.rules) on the questions of issues 19 and 32."""

from __future__ import annotations

import re

import lightlemma
import pytest

from games import rules
from games.kb import load_kb
from games.types import GameConfig, Verdict

REFERENCE, STRICT, LEMMA = GameConfig(), GameConfig(win_rule="strict"), GameConfig(win_rule="lemma")
# fmt: off
SIXTY = [
    "dog", "cat", "cow", "pig", "hen", "owl", "bee", "ant", "fox", "bear", "lion", "wolf", "deer",
    "duck", "goat", "frog", "fish", "crab", "seal", "swan", "car", "bus", "van", "boat", "ship",
    "kite", "drum", "bell", "lamp", "sofa", "bed", "desk", "door", "key", "cup", "fork", "pan",
    "pot", "rope", "ring", "coin", "book", "pen", "map", "hat", "coat", "shoe", "sock", "bag",
    "box", "egg", "cake", "pie", "rice", "corn", "pear", "plum", "lime", "tree", "city",
]
# fmt: on
LIST_QUESTION = "Is it a " + ", ".join(SIXTY) + "?"


def verdict(question, secret, config=REFERENCE):
    return rules.rule_verdict(question, secret, config)


def test_question_words_are_the_references_lemmatised_and_stemmed():
    assert len(rules.QUESTION_WORDS) == 28
    assert (
        "be" in rules.QUESTION_WORD_LEMMAS and "do" in rules.QUESTION_WORD_LEMMAS
    )  # is/are/was, does/did
    assert {
        "is",
        "doe",
        "ha",
    } <= rules.QUESTION_WORD_STEMS  # what lightlemma's stemmer makes of is, does, has


@pytest.mark.parametrize(
    "question, reason",
    [
        ("?", "too short"),
        ("x" * 499 + "?" + " ", None),  # 500 characters once stripped
        ("Is it " + "x" * 500 + "?", "too long"),
        ("Is it an animal? Is it a dog?", "several questions"),
        ("Is it alive??", "several questions"),
        ("Is it an animal", "does not end with a question mark"),
        ("Is it an animal? I think so.", "does not end with a question mark"),
        ("Is it an\nanimal?", "a control character or line break"),
        ("Is it an\tanimal?", "a control character or line break"),
        ("Is it an\u00a0animal?", "a control character or line break"),
        ("Is it an\u2028animal?", "a control character or line break"),
        ("  Is it an animal?\n", None),  # surrounding white space is stripped first
        ("!!?", "no words"),
    ],
)
def test_syntax_checks_are_the_references(question, reason):
    assert rules.syntax_error(question, REFERENCE) == reason
    if reason:
        for config in (REFERENCE, STRICT, LEMMA):
            assert verdict(question, "dog", config) == (Verdict.INVALID, reason)


def test_made_of_wood_for_woods_is_what_the_reference_methods_give():
    # exact: "woods" is not a token of the question; syntax: the stems agree (the lemmas do not)
    assert "woods" not in re.sub(r"[^\w\s-]|[\d]", "", "is it made of wood?").split()
    assert lightlemma.stem("wood") == lightlemma.stem("woods") == "wood"
    assert lightlemma.lemmatize("woods") == "wood" != lightlemma.lemmatize("wood")
    # the scripts run `exact` without `syntax`: the judge answers
    assert verdict("Is it made of wood?", "woods") is None
    assert verdict("Is it made of wood?", "woods", LEMMA) == (Verdict.FINISHED, "names the secret")
    assert verdict("Is it made of wood?", "woods", STRICT) is None  # not a guess: the judge answers
    assert not rules.wins("Is it made of wood?", "woods", "strict")


@pytest.mark.parametrize(
    "question, secret",
    [
        ("Is it made of glass?", "glasses"),
        ("Is it new?", "news"),
        ("Does it pant?", "pants"),
        ("Is it related to jackets?", "jacket"),
    ],
)
def test_lemma_and_stem_matches_win_only_under_lemma(question, secret):
    """The audit's farmable wins: the reference's `syntax` method, which the paper's scripts do not
    pass (verify_judge.methods = [exact, sentence, question, multiple_questions, length])."""
    assert rules.wins(question, secret, "lemma")
    assert not rules.wins(question, secret, "reference")
    assert not rules.wins(question, secret, "strict")


def test_reference_is_correct_obs_with_the_scripts_methods():
    """Each case against a hand run of the reference's correct_obs with the scripts' methods and an
    answer of "yes" from the judge: "finished" where the secret is a token, "invalid" where a
    validity method fails, else the judge's answer (None here: the judge decides)."""
    cases = {
        ("Is it a dog?", "dog"): (Verdict.FINISHED, "names the secret"),
        ("Is it a dog?", "dogs"): None,  # exact: "dogs" is not a token
        ("Are they dogs?", "dog"): None,
        ("Dog?", "dog"): (Verdict.FINISHED, "names the secret"),  # no question-word check
        ("A dog?", "cat"): None,
        ("Rowboat?", "rowboat"): (Verdict.FINISHED, "names the secret"),
        ("Is it a t-shirt?", "t-shirt"): (Verdict.FINISHED, "names the secret"),
        ("Is it 3 dogs?", "dogs"): (Verdict.FINISHED, "names the secret"),
        ("Is it a dog? Or a cat?", "dog"): (Verdict.INVALID, "several questions"),
        ("Is it a dog", "dog"): (Verdict.INVALID, "does not end with a question mark"),
    }
    for (question, secret), expected in cases.items():
        assert verdict(question, secret) == expected, question


@pytest.mark.parametrize(
    "question, secret",
    [
        ("Is it related to jacket?", "jacket"),
        ("Does it have a city center?", "city"),
        ("Is it something you would find next to a dog?", "dog"),
        ("Would a dog like to play with it?", "dog"),
        ("Is it a kind of dog?", "dog"),
        ("Is it a hot dog?", "dog"),
        (LIST_QUESTION, "city"),
    ],
)
def test_a_mention_wins_under_reference_only(question, secret):
    assert rules.wins(question, secret, "reference")
    assert rules.wins(question, secret, "lemma")
    assert not rules.wins(question, secret, "strict")


def test_mentions_in_longer_questions_go_to_the_judge_under_strict():
    assert verdict("Does it have a city center?", "city", STRICT) is None
    assert verdict("Is it related to jacket?", "jacket", STRICT) is None
    assert verdict("Is it a hot dog?", "dog", STRICT) is None  # one thing, but not the secret


def test_a_list_of_sixty_words_wins_under_reference_and_is_invalid_under_strict():
    assert len(SIXTY) == 60 and len(LIST_QUESTION) <= 500
    assert verdict(LIST_QUESTION, "city") == (Verdict.FINISHED, "names the secret")
    assert verdict(LIST_QUESTION, "city", STRICT) == (
        Verdict.INVALID,
        "a guess must name one thing",
    )
    assert verdict(LIST_QUESTION, "zebra", STRICT) == (
        Verdict.INVALID,
        "a guess must name one thing",
    )


@pytest.mark.parametrize(
    "question",
    [
        "Is it a dog or a cat?",
        "Is it basketball, football, baseball?",
        "Is it a dog, or a cat?",
        "Could it be a dog, a cat and a cow?",
        "Is it a football or an animal?",
    ],
)
def test_a_guess_of_several_things_is_invalid_under_strict(question):
    assert verdict(question, "football", STRICT) == (Verdict.INVALID, "a guess must name one thing")
    assert rules.several_things(question)  # told before it is asked, whatever the secret


@pytest.mark.parametrize(
    "question",
    [
        "Is it an idea or a concept?",  # issue 34 item 3: one filed under the other
        "Is it either a human or an animal?",
        "Is it a boat or a canoe?",
        "Is it an animal or a plant?",  # neither is a candidate (broad categories)
    ],
)
def test_categories_in_two_words_are_not_a_guess_of_several_things(question):
    assert verdict(question, "football", STRICT) is None
    assert not rules.several_things(question)


def test_whether_a_list_is_several_things_does_not_depend_on_the_secret():
    for secret in ("animal", "dog", "zorblax"):  # no verdict that tells the secret is listed
        assert verdict("Is it an animal or a plant?", secret, STRICT) is None
        assert verdict("Is it a zorblax or a dog?", secret, STRICT) is None


@pytest.mark.parametrize(
    "question",
    [
        "Is it red or blue?",
        "Is it black and white?",
        "Is it big or small?",
        "Is it bigger than a breadbox, or smaller?",
    ],
)
def test_properties_and_one_thing_are_not_several_things(question):
    assert verdict(question, "zebra", STRICT) is None


@pytest.mark.parametrize(
    "question, secret",
    [
        ("Is it a rowboat?", "rowboat"),
        ("Is it the moon?", "moon"),
        ("Could it be an apple?", "apple"),
        ("Is your word rowboat?", "rowboat"),
        ("Is the secret word 'rowboat'?", "rowboat"),
        ("So, is it a rowboat?", "rowboat"),
        ("Is it a rowboat, then?", "rowboat"),
        ("Is it a T-shirt?", "t-shirt"),
    ],
)
def test_a_guess_of_the_secret_wins_under_every_rule(question, secret):
    for config in (REFERENCE, STRICT, LEMMA):
        assert verdict(question, secret, config) == (Verdict.FINISHED, "names the secret")


@pytest.mark.parametrize("question, secret", [("Are they dogs?", "dog"), ("Is it a dog?", "dogs")])
def test_a_plural_guess_wins_under_strict_and_lemma_not_reference(question, secret):
    assert verdict(question, secret) is None  # the judge answers; its "finished" becomes Yes
    for config in (STRICT, LEMMA):
        assert verdict(question, secret, config) == (Verdict.FINISHED, "names the secret")


def test_a_synonym_of_a_dominant_sense_wins_under_strict_only():
    kb = load_kb()
    couch, sofa = kb.lookup("couch"), kb.lookup("sofa")
    assert couch != sofa
    shared = set(kb.senses(couch)) & set(kb.senses(sofa, "any"))
    assert [kb.synset_names[s] for s in shared] == ["sofa.n.01"]  # {sofa, couch, lounge}
    assert rules.wins("Is it a sofa?", "couch", "strict") and rules.wins(
        "Is it a lounge?", "couch", "strict"
    )
    assert not rules.wins("Is it a sofa?", "couch", "reference")  # no shared lemma or stem
    # a sense that is not one of the secret's dominant ones does not count:
    # "human" is a sense of "man"
    human = kb.lookup("human")
    assert set(kb.senses(human, "any")) & set(kb.senses(kb.lookup("man"), "any"))
    assert not rules.wins("Is it a human?", "man", "strict")


def test_any_lemma_of_the_secrets_sense_wins_under_strict_multi_word_ones_included():
    """Issue 34 item 2: WordNet's dune.n.01 is {dune, sand dune}."""
    assert rules.same_thing("sand dune", "dune") and rules.same_thing("sand dunes", "dune")
    assert rules.same_thing("dune", "sand dune")  # a secret outside the KB's nouns too
    assert verdict("Is it a sand dune?", "dune", STRICT) == (Verdict.FINISHED, "names the secret")
    assert verdict("Is it a domestic dog?", "dog", STRICT) == (Verdict.FINISHED, "names the secret")
    assert not rules.same_thing("hot dog", "dog")  # another synset
    assert verdict("Is it a hot dog?", "dog", STRICT) is None


def test_same_thing_outside_the_knowledge_base_is_string_equality_up_to_plural():
    assert load_kb().lookup("zorblax") is None
    assert rules.same_thing("zorblaxes", "zorblax") and rules.same_thing("zorblax", "zorblaxes")
    assert not rules.same_thing("zorb", "zorblax")
    assert rules.wins("Is it a zorblax?", "zorblax", "strict")


def test_no_question_word_is_invalid_unless_it_names_the_secret_under_lemma():
    assert verdict("A dog?", "cat", LEMMA) == (Verdict.INVALID, "no question word")
    assert verdict("Rowboat?", "rowboat", LEMMA) == (
        Verdict.FINISHED,
        "names the secret",
    )  # as the reference's syntax method
    assert verdict("Rowboat?", "rowboat", STRICT) == (Verdict.INVALID, "no question word")
    assert verdict("Whose is it?", "cat", LEMMA) is None
    assert verdict("A dog?", "cat") is None  # the scripts run no question-word check


def test_invalid_beats_finished():
    for config in (REFERENCE, STRICT, LEMMA):
        assert verdict("Is it an animal? Is it a dog?", "dog", config) == (
            Verdict.INVALID,
            "several questions",
        )
        assert verdict("Is it a dog?\nIs it?", "dog", config)[0] is Verdict.INVALID


def test_multiword_secrets_win_on_consecutive_words():
    assert rules.wins("Is it a soccer ball?", "soccer ball")
    assert not rules.wins("Is it a golf ball?", "golf balls")  # exact: consecutive tokens
    assert rules.wins("Is it a golf ball?", "golf balls", "lemma")  # each word as one token does
    assert not rules.wins("Is it a ball for soccer?", "soccer ball")
    assert rules.wins("Is it a soccer ball?", "soccer ball", "strict")


def test_the_exact_method_keeps_hyphens_and_drops_digits():
    assert rules.wins("Is it a t-shirt?", "t-shirt")
    assert not rules.wins("Is it a shirt?", "t-shirt")
    assert rules.wins("Is it 3 dogs?", "dogs")


def test_a_placeholder_secret_is_never_named():
    assert verdict("Is it a question mark?", "?") is None
    assert verdict("Is it a question mark?", "?", STRICT) is None


def test_long_tokens_are_skipped_as_in_the_reference():
    long_word = "x" * 60
    assert verdict(f"Is it {long_word}?", "dog", LEMMA) is None
    assert verdict(f"{long_word}?", "dog", LEMMA) == (Verdict.INVALID, "no question word")


def test_guessed_things():
    assert rules.guessed_things("Is it a rowboat?") == [("rowboat", True)]
    assert rules.guessed_things("Is your word rowboat or not?") == [("rowboat", False)]
    assert rules.guessed_things("Is it a dog or a cat?") == [("dog", True), ("cat", True)]
    assert rules.guessed_things("Does it have a tail?") is None


def test_strict_answers_a_guess_of_another_thing_no_before_any_judge():
    assert verdict("Is it a canoe?", "dinghy", STRICT) == (
        Verdict.NO,
        "a guess of another thing: a canoe",
    )
    assert (
        rules.feedback(Verdict.NO, "rule: a guess of another thing: a canoe")
        == "No, it is not a canoe."
    )
    assert verdict("Is your word canoe?", "dinghy", STRICT) == (
        Verdict.NO,
        "a guess of another thing: a canoe",
    )
    assert verdict("Is it a wolf?", "dog", STRICT)[0] is Verdict.NO
    # WordNet files rowboat and dinghy as one synset: the same thing, a win
    assert verdict("Is it a rowboat?", "dinghy", STRICT) == (Verdict.FINISHED, "names the secret")
    # categories the secret is filed under, broad categories, kinds, materials, adjectives:
    # the judge
    for question in (
        "Is it a boat?",
        "Is it a vehicle?",
        "Is it a fruit?",
        "Is it a kind of canoe?",
        "Is it made of wood?",
        "Is it red?",
        "Is it metal?",
        "Is it a dog or a cat?",
    ):
        assert (
            verdict(question, "dinghy", STRICT) is None
            or verdict(question, "dinghy", STRICT)[0] is not Verdict.NO
        )
    # a secret outside the knowledge base, or kept to oneself: the judge (or the person) answers
    assert verdict("Is it a canoe?", "zorblax", STRICT) is None
    assert verdict("Is it a canoe?", "?", STRICT) is None
    # the reference rule keeps the reference's protocol: the judge answers
    assert verdict("Is it a canoe?", "dinghy") is None
    assert rules.feedback(Verdict.NO) == "No." and rules.feedback(Verdict.YES, "rule: x") == "Yes."


def test_an_open_category_is_not_another_thing():
    """A pet has under 100 kinds in WordNet, which files no dog under it (games.kb.gaps): "Is it a
    pet?" is for the judge to answer, not a wrong guess; a real other thing still is one."""
    assert verdict("Is it a pet?", "dog", STRICT) is None
    assert verdict("Is it a pet?", "cat", STRICT) is None
    assert verdict("Is it a cat?", "dog", STRICT)[0] is Verdict.NO


@pytest.mark.parametrize(
    "question, thing",
    [
        ("Is it a rowboat?", "a rowboat"),
        ("Could it be an apple?", "an apple"),
        ("Is your word rowboat?", "rowboat"),
        ("Are you thinking of the eiffel tower?", "the eiffel tower"),
        ("Is it a kind of physical object?", None),
        ("Is it an animal?", "an animal"),  # someone's word may be "animal"
        ("Is it made of wood?", None),
        ("Is it red?", None),
        ("Is it alive?", None),
        ("Is it something you eat?", None),
        ("Is it a dog or a cat?", None),
        ("Does it have a tail?", None),
        (LIST_QUESTION, None),
    ],
)
def test_guessed_thing_is_a_guess_of_one_thing(question, thing):
    assert rules.guessed_thing(question) == thing


@pytest.mark.parametrize(
    "question, word",
    [
        ("Is it an object?", None),  # issue 34 item 4: broad categories are not kept words
        ("Is it an organism?", None),
        ("Is it an abstraction?", None),
        ("Is it an animal?", None),
        ("Is it a dog?", "a dog"),
        ("Is your word rowboat?", "rowboat"),
        ("Is it a flibbertigibbet?", "a flibbertigibbet"),  # outside the knowledge base
        ("Is it made of wood?", None),
    ],
)
def test_guessed_word_is_a_guess_of_a_plausible_secret(question, word):
    assert rules.guessed_word(question) == word
