"""Rows the learned judge learns from, split by secret, and their features as arrays.

A row is one (secret, question) pair with the reference judge's yes and no votes and a weight
in the loss. The target is the share of yes votes (a tie is 0.5), so a pair asked in many games
counts once with its observed rate. Secrets are split by a hash of the word, never by row: a
validation or test secret's facts and answers are never trained on.
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from games.judge_eval import REFERENCE_TRIPLES, read_triples
from games.judges.facts import MATCH_DIM, Featurizer
from games.kb import KnowledgeBase

SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class Row:
    secret: str
    question: str
    yes_votes: int
    no_votes: int
    weight: float = 1.0
    source: str = "reference"

    @property
    def target(self) -> float:
        return self.yes_votes / (self.yes_votes + self.no_votes)

    @property
    def answer(self) -> str:
        """The majority answer, `tie` when the votes are equal."""
        if self.yes_votes == self.no_votes:
            return "tie"
        return "yes" if self.yes_votes > self.no_votes else "no"


def split_of(secret: str, val_percent: int, test_percent: int) -> str:
    """train, val or test for a secret: a stable hash of the word, the same on every machine."""
    bucket = zlib.crc32(secret.strip().lower().encode("utf-8")) % 100
    if bucket < test_percent:
        return "test"
    return "val" if bucket < test_percent + val_percent else "train"


def read_rows(path: str | Path, *, weight: float = 1.0, source: str = "file") -> list[Row]:
    """Rows of a Parquet or JSONL file with the columns secret, question and either yes_votes /
    no_votes or answer (yes / no); other answers are skipped."""
    rows = []
    for r in read_triples(path):
        yes, no = r.get("yes_votes"), r.get("no_votes")
        if yes is None or no is None:
            answer = str(r.get("answer", "")).lower()
            yes, no = int(answer == "yes"), int(answer == "no")
        secret, question = str(r.get("secret") or "").strip(), str(r.get("question") or "")
        if secret and question and int(yes) + int(no) > 0:
            rows.append(Row(secret, question, int(yes), int(no), weight, source))
    return rows


def reference_rows() -> list[Row]:
    return read_rows(REFERENCE_TRIPLES, source="reference")


def load_rows(config) -> list[Row]:
    """The rows a command-line run can read itself (reference answers and files): `config` is a
    judge job's (its `dataset` and `data_path`)."""
    if config.dataset == "reference":
        return reference_rows()
    if config.dataset == "file":
        return read_rows(config.data_path)
    raise ValueError(
        f"dataset={config.dataset} reads the web app's database: start it as a job "
        "(Jobs → New judge job) or pass the rows"
    )


def write_rows(rows: Iterable[Row], path: str | Path) -> Path:
    """JSON lines that read_rows reads back."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(
                json.dumps(
                    {
                        "secret": r.secret,
                        "question": r.question,
                        "yes_votes": r.yes_votes,
                        "no_votes": r.no_votes,
                        "answer": r.answer,
                    }
                )
                + "\n"
            )
    return path


@dataclass
class Examples:
    """Rows of one split as arrays over shared question / secret tables."""

    rows: list[Row]
    question_of: np.ndarray  # row -> index into `questions`
    secret_of: np.ndarray  # row -> index into `secrets`
    match: np.ndarray  # row -> match features (MATCH_DIM)
    target: np.ndarray
    weight: np.ndarray

    @property
    def answers(self) -> list[str]:
        return [r.answer for r in self.rows]


@dataclass
class Tables:
    """Token bags of every question and secret the rows mention, and the learned vocabularies."""

    questions: list[tuple[str, ...]]
    secrets: list[tuple[str, ...]]
    question_vocab: list[str]
    secret_vocab: list[str]

    def bags(self, which: str) -> list[list[int]]:
        """Vocabulary ids (1-based; 0 is padding) of each question or secret's tokens."""
        tokens, vocab = (
            (self.questions, self.question_vocab)
            if which == "question"
            else (self.secrets, self.secret_vocab)
        )
        index = {t: i + 1 for i, t in enumerate(vocab)}
        return [[index[t] for t in bag if t in index] for bag in tokens]


def featurize(
    rows: Sequence[Row], kb: KnowledgeBase, *, val_percent: int, test_percent: int, min_count: int
) -> tuple[dict[str, Examples], Tables, dict]:
    """Examples per split, the token tables, and what was dropped (secrets outside the KB)."""
    featurizer = Featurizer(kb)
    nouns: dict[str, int | None] = {}
    kept: list[Row] = []
    for r in rows:
        if r.secret not in nouns:
            nouns[r.secret] = kb.lookup(r.secret)
        if nouns[r.secret] is not None:
            kept.append(r)
    question_index: dict[str, int] = {}
    secret_index: dict[int, int] = {}
    question_facts, secret_facts = [], []
    by_split: dict[str, list[int]] = {s: [] for s in SPLITS}
    match = np.zeros((len(kept), MATCH_DIM), dtype=np.float32)
    of_question = np.zeros(len(kept), dtype=np.int64)
    of_secret = np.zeros(len(kept), dtype=np.int64)
    for i, r in enumerate(kept):
        q = question_index.get(r.question)
        if q is None:
            q = question_index[r.question] = len(question_facts)
            question_facts.append(featurizer.question(r.question))
        noun = nouns[r.secret]
        s = secret_index.get(noun)
        if s is None:
            s = secret_index[noun] = len(secret_facts)
            secret_facts.append(featurizer.secret(noun))
        of_question[i], of_secret[i] = q, s
        match[i] = featurizer.match(secret_facts[s], question_facts[q])
        by_split[split_of(r.secret, val_percent, test_percent)].append(i)
    train = by_split["train"]
    # a question token counts once per training row (= per secret asked it), so a whole question
    # asked about many secrets (`q:is it alive`) gets its own embedding; a secret token counts once
    # per training secret
    question_counts: Counter = Counter()
    for q, rows_with_q in Counter(int(of_question[i]) for i in train).items():
        for t in question_facts[q].tokens:
            question_counts[t] += rows_with_q
    secret_counts = Counter(
        t for s in {int(of_secret[i]) for i in train} for t in secret_facts[s].tokens
    )
    tables = Tables(
        questions=[f.tokens for f in question_facts],
        secrets=[f.tokens for f in secret_facts],
        question_vocab=sorted(t for t, c in question_counts.items() if c >= min_count),
        secret_vocab=sorted(t for t, c in secret_counts.items() if c >= min_count),
    )
    examples = {}
    for split, idx in by_split.items():
        ix = np.array(idx, dtype=np.int64)
        examples[split] = Examples(
            rows=[kept[i] for i in idx],
            question_of=of_question[ix],
            secret_of=of_secret[ix],
            match=match[ix],
            target=np.array([kept[i].target for i in idx], dtype=np.float32),
            weight=np.array([kept[i].weight for i in idx], dtype=np.float32),
        )
    dropped = sorted(s for s, n in nouns.items() if n is None)
    return (
        examples,
        tables,
        {
            "secrets_outside_kb": len(dropped),
            "examples": dropped[:10],
            "rows_dropped": len(rows) - len(kept),
        },
    )
