"""Training the learned judge: splits by secret, the torch network against the numpy judge that
reads its weights, and a whole run on a slice of the reference answers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from games.judges.facts import Featurizer
from games.judges.learned import LearnedJudge, LearnedModel
from games.kb import load_kb, store
from training.judge.config import LearnedJudgeJobConfig
from training.judge.data import Row, featurize, read_rows, reference_rows, split_of, write_rows
from training.judge.init import kb_svd
from training.judge.model import Bags, JudgeNet, export, logits
from training.judge.trainer import build_net, run
from training.reporting import ConsoleReporter


@pytest.fixture(scope="module")
def rows():
    """The reference rows of about 380 secrets (every row of each), so every split has some."""
    everything = reference_rows()
    secrets = sorted({r.secret for r in everything})[::8]
    keep = set(secrets)
    return [r for r in everything if r.secret in keep]


def test_secrets_not_rows_are_split_and_the_split_is_stable():
    assert split_of("dog", 10, 10) == split_of(" Dog ", 10, 10)
    counts = {s: 0 for s in ("train", "val", "test")}
    for word in (f"word{i}" for i in range(2000)):
        counts[split_of(word, 10, 10)] += 1
    assert 150 < counts["test"] < 250 and 150 < counts["val"] < 250
    assert split_of("dog", 0, 0) == "train"


def test_rows_files_round_trip_and_answers(tmp_path):
    rows = [
        Row("dog", "Is it an animal?", 3, 0),
        Row("dog", "Is it loud?", 1, 1),
        Row("cat", "Is it a car?", 0, 2),
    ]
    assert [r.answer for r in rows] == ["yes", "tie", "no"] and rows[1].target == 0.5
    back = read_rows(write_rows(rows, tmp_path / "rows.jsonl"), weight=5.0, source="gold")
    assert [(r.secret, r.question, r.yes_votes, r.no_votes) for r in back] == [
        (r.secret, r.question, r.yes_votes, r.no_votes) for r in rows
    ]
    assert {r.weight for r in back} == {5.0} and {r.source for r in back} == {"gold"}
    (tmp_path / "answers.jsonl").write_text(
        '{"secret": "dog", "question": "Is it big?", "answer": "yes"}\n'
        '{"secret": "dog", "question": "Is it red?", "answer": "tie"}\n'
    )
    assert [(r.yes_votes, r.no_votes) for r in read_rows(tmp_path / "answers.jsonl")] == [(1, 0)]


def test_featurize_keeps_each_secret_in_one_split_and_learns_tokens_from_train_only(rows):
    examples, tables, dropped = featurize(
        rows, load_kb(), val_percent=10, test_percent=10, min_count=2
    )
    secrets = {split: {r.secret for r in e.rows} for split, e in examples.items()}
    assert secrets["train"] and secrets["val"] and secrets["test"]
    assert not (secrets["train"] & secrets["val"]) and not (secrets["train"] & secrets["test"])
    assert sum(len(e.rows) for e in examples.values()) + dropped["rows_dropped"] == len(rows)
    held_out_only = {f"w:{w}" for s in secrets["test"] for w in s.split()} - {
        f"w:{w}" for s in secrets["train"] for w in s.split()
    }
    assert held_out_only and not (held_out_only & set(tables.secret_vocab))


def test_the_numpy_judge_computes_what_the_torch_network_computes(rows, tmp_path):
    kb = load_kb()
    examples, tables, _ = featurize(rows[:3000], kb, val_percent=0, test_percent=0, min_count=1)
    torch.manual_seed(0)
    net = JudgeNet(len(tables.question_vocab), len(tables.secret_vocab), dim=8, hidden=16)
    with torch.no_grad():  # weights the float16 embeddings in the file hold exactly
        for table in (net.question_embedding, net.secret_embedding):
            table.weight.copy_(table.weight.half().float())
        net.question_bias.weight.normal_(0, 0.3)
    export(
        net,
        tmp_path / "w.npz",
        question_vocab=tables.question_vocab,
        secret_vocab=tables.secret_vocab,
        meta={},
    )
    model = LearnedModel(store.read(tmp_path / "w.npz"), tmp_path / "w.npz", kb)
    train = examples["train"]
    bags = (Bags(tables.bags("question")), Bags(tables.bags("secret")))
    with torch.no_grad():
        expected = torch.sigmoid(
            logits(
                net,
                *bags,
                torch.from_numpy(train.question_of),
                torch.from_numpy(train.secret_of),
                torch.from_numpy(train.match),
            )
        ).numpy()
    got = model.p_yes([(kb.lookup(r.secret), r.question) for r in train.rows])
    assert np.abs(got - expected).max() < 1e-5
    assert expected.std() > 0.01  # not a constant network


def test_a_run_learns_something_and_writes_a_judge_that_plays(rows, tmp_path):
    config = LearnedJudgeJobConfig(epochs=3, dim=32, hidden=64, min_count=2)
    with open(tmp_path / "log.jsonl", "w") as log:
        reporter = ConsoleReporter(tmp_path, stream=log)
        result = run(config, reporter, rows=rows)
    assert result["rows"]["train"] > 4 * result["rows"]["test"] > 0
    test = result["test"]
    # better than answering the majority answer (no) to everything, and every question answered
    assert test["coverage"] == 1.0 and test["accuracy"] > 1 - test["reference_yes_rate"] + 0.02
    assert test["kappa"] > 0.3
    metrics = [r for r in reporter.records if r["event"] == "metrics"]
    assert [m["step"] for m in metrics][:2] == sorted(m["step"] for m in metrics)[:2]
    assert "val/accuracy" in metrics[0] and "test/accuracy" in metrics[-1]
    assert reporter.last_checkpoint()["path"] == result["weights"]
    judge = LearnedJudge(result["weights"])
    assert judge.model.meta["held_out"]["test"]["accuracy"] == test["accuracy"]
    assert judge.model.meta["config"]["epochs"] == 3
    assert judge.judge("dog", "Is it an animal?").verdict.value in ("yes", "no")


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_kb_svd_starts_related_tokens_together_and_leaves_held_out_nouns_out():
    kb = load_kb()
    featurizer = Featurizer(kb)
    words = ("dog", "cat", "wolf", "hammer", "chisel", "screwdriver")
    secret_vocab = sorted({t for w in words for t in featurizer.secret(kb.lookup(w)).tokens})
    question_vocab = ["q:is it alive", "u:animal", "u:tool"]
    # every noun named "...hammer..." held out: a token only they have starts at zero
    held_out = {n for n, name in enumerate(kb.nouns) if "hammer" in name.split()}
    secret, question = kb_svd(kb, secret_vocab, question_vocab, 16, held_out=held_out)
    assert secret.shape == (len(secret_vocab) + 1, 16) and question.shape == (4, 16)
    assert not secret[0].any() and not question[0].any()  # the padding rows
    assert secret.std() == pytest.approx(0.1, rel=0.05)
    at = {t: secret[i + 1] for i, t in enumerate(secret_vocab)}
    assert not at["w:hammer"].any() and at["w:dog"].any()
    canine, carnivore, tool = at["1:isa:canine"], at["1:isa:carnivore"], at["1:isa:cutting tool"]
    assert _cosine(canine, carnivore) > _cosine(canine, tool) + 0.3
    animal, tool_word = question[2], question[3]  # u:animal and u:tool, from the tokens naming them
    assert _cosine(animal, at["1:isa:animal"]) > _cosine(animal, tool) + 0.3
    assert _cosine(tool_word, tool) > _cosine(tool_word, at["1:isa:animal"]) + 0.3


def test_the_kb_svd_init_sets_the_starting_embeddings_and_random_stays_the_default(rows):
    kb = load_kb()
    examples, tables, _ = featurize(rows[:3000], kb, val_percent=20, test_percent=20, min_count=1)
    assert LearnedJudgeJobConfig().init == "random"
    random_net = build_net(LearnedJudgeJobConfig(dim=8, hidden=8), examples, tables, kb)
    svd_net = build_net(LearnedJudgeJobConfig(dim=8, hidden=8, init="kb-svd"), examples, tables, kb)
    held_out = {kb.lookup(r.secret) for s in ("val", "test") for r in examples[s].rows}
    assert held_out
    secret, question = kb_svd(
        kb, tables.secret_vocab, tables.question_vocab, 8, held_out=held_out, seed=0
    )
    assert np.allclose(svd_net.secret_embedding.weight.detach().numpy(), secret)
    assert np.allclose(svd_net.question_embedding.weight.detach().numpy(), question)
    assert not np.allclose(random_net.secret_embedding.weight.detach().numpy(), secret)


def test_bad_configs_are_refused():
    for bad in (
        dict(dataset="everything"),
        dict(dataset="file"),
        dict(dataset="games"),
        dict(epochs=0),
        dict(val_percent=40, test_percent=40),
        dict(extra_weight=0),
        dict(learning_rate=2),
        dict(init="glove"),
    ):
        with pytest.raises(ValueError):
            LearnedJudgeJobConfig(**bad)
    with pytest.raises(ValueError, match="web app"):
        run(
            LearnedJudgeJobConfig(dataset="reference+gold"),
            ConsoleReporter("/tmp/never-used-judge-run"),
        )


def test_a_handful_of_steps_trains_too(rows, tmp_path):
    """A small gold set gives few optimizer steps (10 once broke the one-cycle schedule)."""
    few = rows[:1100]
    for epochs in (1, 5, 10):
        config = LearnedJudgeJobConfig(
            epochs=epochs, dim=8, hidden=8, min_count=1, val_percent=0, test_percent=0
        )
        with open(tmp_path / f"{epochs}.log", "w") as log:
            reporter = ConsoleReporter(tmp_path / str(epochs), stream=log)
            result = run(config, reporter, rows=few)
        assert result["rows"]["train"] == len(few) and result["weights"].endswith(
            "learned_judge.npz"
        )


def test_a_question_asked_about_many_training_secrets_gets_its_own_token():
    """Question tokens count training rows: one question asked of four secrets is learned whole."""
    secrets = ["dog", "cat", "horse", "cow"]
    rows = [Row(s, "Is it a pet?", 1, 0) for s in secrets] + [
        Row("dog", "Does it bark loudly?", 1, 0)
    ]
    _, tables, _ = featurize(rows, load_kb(), val_percent=0, test_percent=0, min_count=4)
    assert "q:is it a pet" in tables.question_vocab and "u:pet" in tables.question_vocab
    assert "u:bark" not in tables.question_vocab  # one row only
    assert "w:dog" not in tables.secret_vocab  # secret tokens count secrets: dog is one
