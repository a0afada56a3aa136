"""The knowledge-base judge: secrets, question forms, tolerance, robustness, sense modes,
autocompletion and a game through the real engine."""

from __future__ import annotations

import pytest

from games.engine import TwentyQuestions
from games.judges.base import JudgeRequest, UnknownSecretError
from games.judges.kb import KBJudge
from games.kb import load_kb
from games.types import Verdict

YES, NO, UNKNOWN = Verdict.YES, Verdict.NO, Verdict.UNKNOWN


@pytest.fixture(scope="module")
def judge():
    return KBJudge(load_kb())


def test_names_and_sense_modes():
    kb = load_kb()
    assert KBJudge(kb).name == "kb"
    assert KBJudge(kb, sense="any").name == "kb-any"
    assert KBJudge(kb, sense="first").name == "kb-first"
    with pytest.raises(ValueError, match="sense mode"):
        KBJudge(kb, sense="all")


def test_check_secret(judge):
    for secret in ("dog", "Dogs", "soccer_ball", "Soccer Ball", "geese", "muskox"):
        judge.check_secret(secret)
    with pytest.raises(UnknownSecretError, match="'flibbertigibbet'"):
        judge.check_secret("flibbertigibbet")
    with pytest.raises(UnknownSecretError):
        judge.check_secret("")


@pytest.mark.parametrize(
    "secret, question, verdict, raw",
    [
        ("dog", "Is it an animal?", YES, "isa:animal"),
        ("dog", "Is it a kind of mammal?", YES, "isa:mammal"),
        ("dog", "Is it a type of plant?", NO, "isa:plant"),
        ("dog", "Is it a sort of canine?", YES, "isa:canine"),
        ("apple", "Is it food?", YES, "isa:food"),
        ("dog", "Is it food?", NO, "isa:food"),
        ("car", "Does it have wheels?", YES, "has:wheel"),
        ("car", "Does it have an engine?", YES, "has:engine"),
        ("dog", "Does it have a tail?", YES, "has:tail"),
        ("wheel", "Is it part of a car?", YES, "part:car"),
        ("wheel", "Is it a part of a bicycle?", YES, "part:bicycle"),
        ("finger", "Is it part of the hand?", YES, "part:hand"),
        ("water", "Is it made of hydrogen?", YES, "made:hydrogen"),
        ("car", "Is it made from hydrogen?", UNKNOWN, "unknown: no made:hydrogen fact stored"),
        ("guitar", "Is it a musical instrument?", YES, "isa:musical instrument"),
        ("puppy", "Is it a living thing?", YES, "isa:living thing"),
        ("apple", "Is it red?", YES, "prop:red"),
        ("car", "Is it red?", UNKNOWN, "unknown: no prop:red fact stored"),
        ("comb", "Is it man-made?", UNKNOWN, "unknown: no prop:man-made fact stored"),
        ("car", "Does it have a tail?", UNKNOWN, "unknown: no has:tail fact stored"),
        ("tail", "Is it related to animals?", YES, "rel:animal"),
        ("puppy", "Is it a dog?", YES, "isa:dog"),  # a guess of a hypernym: yes
        ("dog", "Is it a puppy?", NO, "isa:puppy"),  # a guess of another word: no
        ("dog", "Could it be a cat?", NO, "isa:cat"),
    ],
)
def test_question_forms(judge, secret, question, verdict, raw):
    answer = judge.judge(secret, question)
    assert (answer.verdict, answer.raw) == (verdict, raw)


@pytest.mark.parametrize(
    "question",
    [
        "is it a KIND of  musical instruments??",
        "IS IT A MUSICAL INSTRUMENT",
        "  Is it   a musical instrument ?",
        "Is it an musical instrument?!",
        "So, is it a musical instrument or not?",
        "Is the object a musical instrument?",
    ],
)
def test_tolerant_of_case_spaces_articles_plurals_and_punctuation(judge, question):
    assert judge.judge("guitar", question).verdict is YES


@pytest.mark.parametrize(
    "question",
    [
        "",
        "?",
        "Is it?",
        "x" * 100_000,
        "Is it " + "very " * 20_000 + "big?",
        "\x00\x01\xff\ufffd binary",
        "<html><body><script>alert(1)</script></body></html>",
        "Is it bigger than a breadbox?",
        "Is it an animal or a plant?",
        "What is it?",
        "Is it a flibbertigibbet?",
        "Does it have?",
        "DROP TABLE words; --",
        "Is it a kind of " + "dog " * 500 + "?",
    ],
)
def test_ungroundable_text_is_unknown_never_an_error(judge, question):
    answer = judge.judge("dog", question)
    assert answer.verdict is UNKNOWN and answer.raw.startswith("unknown")


def test_odd_inputs_never_raise(judge):
    requests = [
        JudgeRequest("dog", None),
        JudgeRequest(None, "Is it an animal?"),
        JudgeRequest(42, b"bytes"),
        JudgeRequest("flibbertigibbet", "Is it an animal?"),
    ]
    answers = judge.judge_batch(requests)
    assert [a.verdict for a in answers] == [UNKNOWN] * 4
    assert "unknown secret" in answers[3].raw


def test_batch_keeps_order(judge):
    questions = ["Is it an animal?", "Is it a plant?", "Does it have wheels?", "Is it a dog?"]
    answers = judge.judge_batch([JudgeRequest("cat", q) for q in questions])
    assert [a.verdict for a in answers] == [YES, NO, UNKNOWN, NO]


def test_only_complete_facts_answer_no_unless_the_world_is_closed():
    """Hypernyms are complete for a noun under its sense policy: an absent one is a No. Parts,
    materials, relations and properties are sparse: absent, they are unknown, except in the closed
    world (`closed=True`, the information-gain guesser's model), where every absent fact is a No."""
    kb = load_kb()
    closed = KBJudge(kb, closed=True)
    assert closed.name == "kb-closed" and KBJudge(kb, "any", closed=True).name == "kb-any-closed"
    for secret, question in [
        ("car", "Does it have a tail?"),
        ("comb", "Is it man-made?"),
        ("car", "Is it made from hydrogen?"),
        ("dog", "Is it part of a car?"),
        ("dog", "Is it related to music?"),
        ("dog", "Is it a pet?"),  # a gap of the taxonomy (games.kb.gaps)
    ]:
        assert KBJudge(kb).judge(secret, question).verdict is UNKNOWN, question
        assert closed.judge(secret, question).verdict is NO, question
    for secret, question, verdict in [
        ("dog", "Is it a kind of plant?", NO),
        ("dog", "Does it have a tail?", YES),
        ("apple", "Is it red?", YES),
    ]:
        assert KBJudge(kb).judge(secret, question).verdict is verdict
        assert closed.judge(secret, question).verdict is verdict


def test_sense_modes_disagree_on_bank():
    kb = load_kb()
    dominant, every, first = KBJudge(kb), KBJudge(kb, "any"), KBJudge(kb, "first")
    assert dominant.judge("bank", "Is it a kind of array?").verdict is NO
    assert every.judge("bank", "Is it a kind of array?").verdict is YES
    assert dominant.judge("bank", "Is it a financial institution?").verdict is YES
    assert first.judge("bank", "Is it a financial institution?").verdict is NO
    assert all(
        j.judge("bank", "Is it a kind of slope?").verdict is YES for j in (dominant, every, first)
    )


def test_forms_and_vocabulary(judge):
    forms = judge.forms()
    assert all("{x}" in f and f.endswith("?") for f in forms) and "Does it have a {x}?" in forms
    assert judge.vocabulary("musical in")[0] == "musical instrument"
    assert judge.vocabulary("Car", limit=3)[0] == "car"
    assert len(judge.vocabulary("", limit=7)) == 7 and judge.vocabulary("", limit=0) == []
    assert judge.vocabulary("zzqqxx") == []
    assert "about" not in judge.vocabulary("ab", limit=500)  # function words are not offered
    for concept in judge.vocabulary("", limit=40):  # every suggestion grounds in some form
        grounded = [judge.ground(f.replace("{x}", concept))[0] for f in forms]
        assert any(g is not None for g in grounded), concept


def test_a_game_through_the_engine(judge):
    env = TwentyQuestions(judge)
    env.reset("Guitar", seed=3)
    assert env.step("Is it an animal?").turn.verdict is NO
    step = env.step("Is it a musical instrument?")
    assert step.turn.verdict is YES and step.turn.judge_raw == "isa:musical instrument"
    assert env.step("Is it a piano?").turn.verdict is NO
    assert env.step("Can it fly?").turn.verdict is UNKNOWN
    assert env.step("Is it a guitar?").won
    with pytest.raises(UnknownSecretError):
        TwentyQuestions(judge).reset("flibbertigibbet")


def test_the_taxonomy_gaps_answer_unknown_not_a_wrong_no():
    """WordNet files a dog under domestic animal, not pet, and the tree sense of redwood under
    cypress wood: the open-world judge answers unknown there (not the closed world's No), and
    keeps its No where the taxonomy is sound."""
    kb = load_kb()
    judge, before = KBJudge(kb), KBJudge(kb, vouch_all=True)
    for secret, question in [
        ("dog", "Is it a pet?"),
        ("cat", "Is it a pet?"),
        ("redwood", "Is it a tree?"),
        ("redwood", "Is it a plant?"),
    ]:
        assert before.judge(secret, question).verdict is NO, question
        answer = judge.judge(secret, question)
        assert answer.verdict is UNKNOWN and "taxonomy gap" in answer.raw, question
    for secret, question, verdict in [
        ("dog", "Is it a bird?", NO),
        ("dog", "Is it a plant?", NO),
        ("rose", "Is it a tree?", NO),
        ("redwood", "Is it an animal?", NO),
        ("redwood", "Is it wood?", YES),
        ("oak", "Is it a tree?", YES),
        ("hammer", "Is it a vehicle?", NO),
    ]:
        assert judge.judge(secret, question).verdict is verdict, (secret, question)


def test_open_categories_are_measured_on_training_secrets_only():
    """A category opens when the KB's No disagrees with the reference more often than the reference
    with itself; rows of validation and test secrets never count."""
    from training.judge.data import split_of
    from training.judge.open_categories import closed_no_counts, open_categories

    train = next(
        w for w in ("dog", "cat", "cow", "horse", "wolf") if split_of(w, 10, 10) == "train"
    )
    held_out = next(
        w
        for w in ("lion", "tiger", "sheep", "goat", "pig", "fox", "bear", "deer")
        if split_of(w, 10, 10) != "train"
    )
    rows = [
        {"secret": train, "question": "Is it a pet?", "answer": a}
        for a in ["yes"] * 3 + ["no"] * 17
    ]
    rows += [{"secret": held_out, "question": "Is it a pet?", "answer": "yes"}] * 50
    assert closed_no_counts(rows) == {"pet": [17, 3]}
    assert open_categories({"pet": [17, 3]}) == {"pet": {"no": 17, "yes": 3, "disagreement": 0.15}}
    assert open_categories({"pet": [92, 8]}) == {}  # 8% < 8.2%: as sure as the reference
    assert open_categories({"pet": [10, 9]}) == {}  # too few questions to tell
