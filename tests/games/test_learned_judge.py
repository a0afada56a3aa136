"""The learned judge with the shipped weights, the hybrid, and the features they read: answers
with a probability, the engine's rules around it, any text, and broken weights files."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from games.engine import TwentyQuestions
from games.judges.base import JudgeRequest, UnknownSecretError
from games.judges.facts import MATCH_DIM, Featurizer
from games.judges.learned import DEFAULT_WEIGHTS, LearnedJudge, LearnedModel, WeightsError
from games.kb import RELATIONS, load_kb, store
from games.registry import SpecError, build_judge
from games.types import GameConfig, Verdict

YES, NO, UNKNOWN = Verdict.YES, Verdict.NO, Verdict.UNKNOWN
ODD_QUESTIONS = [
    "",
    "   ",
    "?",
    "?!?...",
    "x" * 10_000,
    "Is it\x00 an\x07 animal?",
    "Is it \ud800 big?",
    "Это животное?",
    "動物ですか？",
    "Is it a " + "very " * 500 + "big thing?",
    "\n\t\r",
    "🐶?",
]


@pytest.fixture(scope="module")
def judge():
    return LearnedJudge()


def test_ordinary_questions_get_sure_answers(judge):
    for secret, question, verdict in [
        ("dog", "Is it an animal?", YES),
        ("dog", "Is it a vehicle?", NO),
        ("hammer", "Is it a tool?", YES),
        ("hammer", "Is it alive?", NO),
        ("comb", "Is it man-made?", YES),
        ("banana", "Is it a fruit?", YES),
        ("banana", "Is it a place?", NO),
        ("teacher", "Is it a person?", YES),
    ]:
        answer = judge.judge(secret, question)
        assert answer.verdict is verdict, (secret, question, answer)
        assert answer.raw.startswith("learned: p(yes)=")
        assert float(answer.raw.split("=")[1]) == pytest.approx(answer.p_yes, abs=6e-4)
        assert (answer.p_yes >= judge.model.threshold) == (verdict is YES)


def test_a_batch_answers_as_one_by_one(judge):
    pairs = [
        ("dog", "Is it an animal?"),
        ("violin", "Is it a musical instrument?"),
        ("dog", "Does it bark?"),
        ("castle", "Is it a building?"),
        ("castle", "Is it edible?"),
    ]
    batch = judge.judge_batch([JudgeRequest(s, q) for s, q in pairs])
    single = [judge.judge(s, q) for s, q in pairs]
    assert [a.verdict for a in batch] == [a.verdict for a in single]
    assert [a.p_yes for a in batch] == pytest.approx([a.p_yes for a in single], abs=1e-6)
    assert len({a.p_yes for a in batch}) == len(pairs)  # the secret and the question both matter


def test_any_text_gets_an_answer_or_unknown(judge):
    for question in ODD_QUESTIONS + [None, 12, b"Is it big?"]:
        answer = judge.judge("dog", question)
        assert answer.verdict in (YES, NO, UNKNOWN), question
        if answer.verdict is UNKNOWN:
            assert answer.p_yes is None
        else:
            assert 0.0 <= answer.p_yes <= 1.0
    assert judge.judge("dog", "?!?...").verdict is UNKNOWN  # no words to read
    assert judge.judge("dog", "x" * 10_000).verdict in (YES, NO)


def test_unknown_secrets_are_refused_before_a_game(judge):
    with pytest.raises(UnknownSecretError, match="flibbertigibbet"):
        judge.check_secret("flibbertigibbet")
    with pytest.raises(UnknownSecretError):
        TwentyQuestions(judge).reset("flibbertigibbet")
    assert judge.judge("flibbertigibbet", "Is it big?").verdict is UNKNOWN


def test_the_engine_rules_run_around_it_and_turns_keep_how_sure_it_was(judge):
    env = TwentyQuestions(judge, GameConfig(max_turns=5))
    env.reset("dog", seed=0)
    first = env.step("Is it an animal?").turn
    assert first.verdict is YES and 0.5 <= first.extra["p_yes"] <= 1.0
    assert env.step("is it an ANIMAL?").turn.verdict is Verdict.REPEATED
    assert env.step("Is it a cat? Or a dog?").turn.verdict is Verdict.INVALID
    assert "p_yes" not in env.trajectory.turns[-1].extra
    result = env.step("Is it a dog?")
    assert result.turn.verdict is Verdict.FINISHED and result.won


def test_featurizer_matches_question_phrases_to_the_secrets_facts():
    kb = load_kb()
    f = Featurizer(kb)
    dog = f.secret(kb.lookup("dog"))
    assert "1:isa:dog" in dog.tokens and "d:isa:animal" in dog.tokens and "w:dog" in dog.tokens
    kind = f.match(dog, f.question("Is it a kind of animal?"))
    assert kind.shape == (MATCH_DIM,) and kind[-1] == 1.0
    isa = RELATIONS.index("isa")
    assert kind[isa * 3] == 1.0 and 0.0 < kind[isa * 3 + 1] < 1.0  # matched, somewhat specific
    offset_kb = len(kind) - 1 - 2 * (len(RELATIONS) + 1)
    assert kind[offset_kb + isa] == 1.0  # the KB judge would say yes
    vehicle = f.match(dog, f.question("Is it a kind of vehicle?"))
    assert vehicle[isa * 3] == 0.0 and vehicle[offset_kb + isa] == -1.0
    free = f.match(dog, f.question("Would you keep it at home?"))
    assert free[offset_kb + len(RELATIONS)] == 1.0  # does not ground in the KB's grammar
    assert (
        f.question("Is it a kind of animal?").tokens
        == f.question("is it a KIND of animal ?").tokens
    )


def test_broken_weights_name_the_file_and_how_to_rebuild(tmp_path):
    missing = tmp_path / "none.npz"
    with pytest.raises(WeightsError, match=f"{missing}.*missing.*python -m training.judge --out"):
        LearnedModel.load(missing)
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip at all")
    with pytest.raises(WeightsError, match="garbage.npz.*cannot be read.*python -m training.judge"):
        LearnedModel.load(garbage)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(DEFAULT_WEIGHTS.read_bytes()[:100_000])
    with pytest.raises(WeightsError, match="truncated.npz"):
        LearnedModel.load(truncated)
    payload = store.read(DEFAULT_WEIGHTS)
    payload["meta"] = {**payload["meta"], "format": 0}
    store.write(payload, tmp_path / "old.npz")
    with pytest.raises(WeightsError, match="format 0"):
        LearnedModel.load(tmp_path / "old.npz")
    with pytest.raises(WeightsError, match="missing"):
        build_judge(f"learned:{missing}")
    assert zipfile.is_zipfile(DEFAULT_WEIGHTS)


def test_specs_build_the_learned_and_hybrid_judges():
    assert build_judge("learned").name == "learned"
    assert build_judge(f"learned:{DEFAULT_WEIGHTS}").name == f"learned:{DEFAULT_WEIGHTS}"
    hybrid = build_judge("kb+learned")
    assert hybrid.name == "kb+learned" and not hybrid.kb.closed
    with pytest.raises(ValueError, match="abstain"):
        build_judge("learned", abstain=0.7)
    with pytest.raises(SpecError, match="unknown kb option 'everything'"):
        build_judge("kb:everything")


def test_abstaining_near_the_threshold_says_unknown():
    sure, unsure = build_judge("learned"), build_judge("learned", abstain=0.3)
    outcomes = set()
    for question in (
        "Is it related to people?",
        "Is it an animal?",
        "Is it a vehicle?",
        "Is it loud?",
        "Is it found indoors?",
        "Is it bigger than a breadbox?",
    ):
        p = sure.judge("dog", question).p_yes
        verdict = unsure.judge("dog", question).verdict
        threshold = sure.model.threshold  # chosen on the validation secrets
        assert verdict is (
            UNKNOWN if abs(p - threshold) < 0.3 else YES if p >= threshold else NO
        ), question
        outcomes.add(verdict)
    assert UNKNOWN in outcomes and len(outcomes) >= 2


def test_the_hybrid_takes_the_kb_where_it_vouches_and_the_model_elsewhere():
    hybrid = build_judge("kb+learned")
    isa_no = hybrid.judge("dog", "Is it a kind of vehicle?")
    assert isa_no.verdict is NO and isa_no.raw == "kb: isa:vehicle" and isa_no.p_yes is None
    isa_yes = hybrid.judge("dog", "Is it a kind of animal?")
    assert isa_yes.verdict is YES and isa_yes.raw.startswith("kb: ")
    sparse = hybrid.judge("comb", "Is it man-made?")  # the KB stores no prop:man-made for a comb
    assert sparse.raw.startswith("learned: ") and sparse.verdict is YES
    free = hybrid.judge("dog", "Would you keep it at home?")
    assert free.raw.startswith("learned: ") and free.p_yes is not None
    answers = hybrid.judge_batch(
        [JudgeRequest("dog", "Is it a kind of vehicle?"), JudgeRequest("comb", "Is it man-made?")]
    )
    assert [a.raw.split(":")[0] for a in answers] == ["kb", "learned"]
    for question in ODD_QUESTIONS:
        assert hybrid.judge("dog", question).verdict in (YES, NO, UNKNOWN)


def test_numpy_forward_matches_a_hand_computed_network(tmp_path):
    """A 2-dim network written by hand: logit = MLP([q, s, q*s, m]) + w.m + question biases."""
    kb = load_kb()
    rng = np.random.default_rng(0)
    dim, hidden = 2, 3
    payload = {
        "meta": {"format": 1, "threshold": 0.5},
        "question_vocab": ["u:animal", "u:it"],
        "secret_vocab": ["d:isa:animal", "w:dog"],
        "question_embedding": np.array([[0, 0], [1, 2], [3, -1]], dtype=np.float16),
        "question_bias": np.array([0.0, 0.5, -0.25], dtype=np.float32),
        "secret_embedding": np.array([[0, 0], [2, 0], [0, 4]], dtype=np.float16),
        "mlp0.weight": rng.normal(size=(hidden, 3 * dim + MATCH_DIM)).astype(np.float32),
        "mlp0.bias": rng.normal(size=hidden).astype(np.float32),
        "mlp1.weight": rng.normal(size=(hidden, hidden)).astype(np.float32),
        "mlp1.bias": rng.normal(size=hidden).astype(np.float32),
        "mlp2.weight": rng.normal(size=(1, hidden)).astype(np.float32),
        "mlp2.bias": np.array([0.1], dtype=np.float32),
        "wide.weight": rng.normal(size=(1, MATCH_DIM)).astype(np.float32),
        "wide.bias": np.array([-0.2], dtype=np.float32),
    }
    store.write(payload, tmp_path / "hand.npz")
    model = LearnedModel.load(tmp_path / "hand.npz", kb)
    noun = kb.lookup("dog")
    question = "Is it an animal?"
    q = np.array([2.0, 0.5])  # mean of u:animal and u:it
    s = np.array([1.0, 2.0])  # mean of d:isa:animal and w:dog
    m = model.featurizer.match(model.featurizer.secret(noun), model.featurizer.question(question))
    x = np.concatenate([q, s, q * s, m])
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    h = relu(
        payload["mlp1.weight"] @ relu(payload["mlp0.weight"] @ x + payload["mlp0.bias"])
        + payload["mlp1.bias"]
    )
    logit = (payload["mlp2.weight"] @ h)[0] + 0.1 + payload["wide.weight"][0] @ m - 0.2 + 0.25
    assert model.p_yes([(noun, question)])[0] == pytest.approx(1 / (1 + np.exp(-logit)), rel=1e-5)
