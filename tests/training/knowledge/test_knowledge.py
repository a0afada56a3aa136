"""The knowledge stage: sequences that state true facts in the KB judge's language, trained as a
plain causal LM (every token)."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest

from games import rules
from games.judges.kb import KBJudge
from games.kb import load_kb
from games.types import Verdict
from training.knowledge.config import KnowledgeJobConfig
from training.knowledge.data import knowledge_texts
from training.reporting import ConsoleReporter

WORDS = ["poodle", "apple", "car", "freedom"]


@pytest.fixture(scope="module")
def rows():
    rows, missing = knowledge_texts(
        load_kb(),
        [*WORDS, "xyzzyq"],
        sense="dominant",
        sequences_per_word=4,
        facts_per_sequence=6,
        negatives_per_sequence=2,
        seed=0,
    )
    assert missing == ["xyzzyq"]
    return rows


def test_config_defaults_and_validation():
    c = KnowledgeJobConfig()
    assert (
        c.word_list == "dbrl/solved"
        and c.learning_rate > KnowledgeJobConfig.__mro__[1]().learning_rate
    )
    assert all(f.metadata.get("help") for f in dataclasses.fields(KnowledgeJobConfig))
    for field, value in [
        ("sense", "all"),
        ("sequences_per_word", 0),
        ("facts_per_sequence", 0),
        ("word_list", ""),
    ]:
        with pytest.raises(ValueError, match=f"^{field}"):
            KnowledgeJobConfig(**{field: value})


def test_every_word_gets_both_forms(rows):
    assert [(r["word"], r["form"]) for r in rows[:4]] == [
        ("poodle", "statements"),
        ("poodle", "questions"),
    ] * 2
    assert {r["word"] for r in rows} == set(WORDS) and len(rows) == 4 * len(WORDS)
    statements = [r["text"] for r in rows if r["form"] == "statements" and r["word"] == "poodle"]
    assert all(t.startswith("A poodle ") for t in statements)
    assert any("Poodle: an intelligent dog" in t for t in statements)  # the WordNet gloss


def test_question_form_answers_are_what_the_kb_judge_says(rows):
    judge = KBJudge(closed=True)  # the knowledge stage teaches the KB's closed world
    for row in (r for r in rows if r["form"] == "questions"):
        pairs = [(q.strip(), a) for q, a in re.findall(r"([^?]+\?) (Yes|No)\.", row["text"])]
        assert pairs[-1] == (
            f"Is it {'an' if row['word'][0] in 'aeiou' else 'a'} {row['word']}?",
            "Yes",
        )
        assert sum(a == "No" for _, a in pairs) >= 1  # facts of other words, answered No
        for question, answer in pairs[:-1]:
            assert not rules.names_secret(question, row["word"])  # no fact gives the word away
            verdict = judge.answer(row["word"], question).verdict
            assert verdict is (Verdict.YES if answer == "Yes" else Verdict.NO), (
                row["word"],
                question,
            )


def test_most_specific_facts_are_always_kept(rows):
    poodle = [r["text"] for r in rows if r["word"] == "poodle" and r["form"] == "statements"]
    first = set(poodle[0].split(". ")[:3])
    assert all(
        first <= set(t.split(". ")) for t in poodle
    )  # the core half repeats, the rest varies
    assert poodle[0] != poodle[1]


def test_training_uses_every_token_and_stores_the_sequences(tiny_dir, tmp_path):
    from safetensors.torch import load_file

    from training.knowledge.trainer import TEXTS_FILE, run

    reporter = ConsoleReporter(tmp_path, stream=io.StringIO())
    config = KnowledgeJobConfig(
        base_model="unused",
        max_steps=3,
        learning_rate=5e-3,
        global_batch_size=8,
        per_device_batch_size=8,
        warmup_ratio=0.0,
        sequences_per_word=2,
    )
    result = run(config, reporter, model_path=str(tiny_dir), words=WORDS)
    assert result["words"] == 4 and result["sequences"] == 8 and result["global_step"] == 3
    assert result["last_loss"] < result["first_loss"]
    stored = [json.loads(line) for line in (tmp_path / TEXTS_FILE).read_text().splitlines()]
    assert [r["text"] for r in stored][:2] == [
        r["text"]
        for r in knowledge_texts(
            load_kb(), WORDS, sense="dominant", sequences_per_word=2, facts_per_sequence=8, seed=0
        )[0]
    ][:2]
    saved = json.loads((Path(result["final_checkpoint"]) / "training_config.json").read_text())
    assert saved["kind"] == "knowledge" and saved["resolved"]["loss"] == "every token"
    before = load_file(str(tiny_dir / "model.safetensors"))
    after = load_file(str(Path(result["final_checkpoint"]) / "model.safetensors"))
    assert any((before[k] != after[k]).any() for k in before)


def test_plain_text_labels_are_the_input_ids(tiny_dir, rows, tmp_path):
    from training.common.models import DeviceSetup, load_model
    from training.sft.trainer import build_sft_trainer

    model, tok = load_model(str(tiny_dir))
    trainer = build_sft_trainer(
        KnowledgeJobConfig(base_model="x"),
        model,
        tok,
        rows[:1],
        output_dir=tmp_path,
        setup=DeviceSetup("cpu", "float32"),
        completion_only=False,
    )
    row = trainer.train_dataset[0]
    assert row["labels"] == row["input_ids"]
    assert tok.decode(row["input_ids"]) == rows[0]["text"] + "<|end|>"
