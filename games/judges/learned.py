"""The learned judge: answers any yes/no question about a knowledge-base noun from what the KB
knows of it, with a model trained on a reference judge's answers (training/judge).

The model reads the features of games.judges.facts: a bag of question tokens and a bag of secret
tokens, each averaged over learned embeddings, and the match features, through a small MLP:

    logit = MLP([q, s, q * s, m]) + w . m + sum of the question tokens' biases

Inference is numpy only (no torch), with the question and secret vectors cached, so it runs in
the web process. The weights are one .npz (games.kb.store format); `p_yes` is the model's
probability of yes, and the verdict is yes when it reaches the threshold.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from games.judges.base import Judge, JudgeRequest, UnknownSecretError, probability_answer
from games.judges.facts import MATCH_DIM, Featurizer, QuestionText, SecretFacts
from games.kb import KnowledgeBase, load_kb, store
from games.types import JudgeAnswer, Verdict

DEFAULT_WEIGHTS = Path(__file__).resolve().parents[1] / "data" / "judges" / "learned.npz"
FORMAT = 1  # bumped when the features or the network change
REBUILD = "python -m training.judge --out {path}"
MAX_CACHED = 200_000
LAYERS = ("mlp0", "mlp1", "mlp2")


class WeightsError(RuntimeError):
    """The learned judge's weights file is missing, unreadable or of another format."""


def weights_error(path: Path, what: str) -> WeightsError:
    return WeightsError(
        f"the learned judge's weights {path} {what}; rebuild them with "
        f"`{REBUILD.format(path=path)}` (a few minutes on 2 CPU cores)"
    )


class LearnedModel:
    """The network's weights and a numpy forward pass; thread-safe caches of vectors."""

    def __init__(self, payload: dict, path: Path, kb: KnowledgeBase):
        self.path = path
        self.meta: dict = payload["meta"]
        if self.meta.get("format") != FORMAT:
            raise weights_error(path, f"are of format {self.meta.get('format')!r}, not {FORMAT}")
        self.threshold = float(self.meta.get("threshold", 0.5))
        self.question_vocab = {t: i + 1 for i, t in enumerate(payload["question_vocab"])}
        self.secret_vocab = {t: i + 1 for i, t in enumerate(payload["secret_vocab"])}
        self.question_embedding = payload["question_embedding"].astype(np.float32)
        self.question_bias = payload["question_bias"].astype(np.float32)
        self.secret_embedding = payload["secret_embedding"].astype(np.float32)
        self.layers = [
            (payload[f"{n}.weight"].astype(np.float32), payload[f"{n}.bias"].astype(np.float32))
            for n in LAYERS
        ]
        self.wide = payload["wide.weight"].astype(np.float32).reshape(-1)
        self.wide_bias = float(payload["wide.bias"].reshape(-1)[0])
        dim = self.question_embedding.shape[1]
        if self.layers[0][0].shape[1] != 3 * dim + MATCH_DIM or len(self.question_vocab) + 1 != len(
            self.question_bias
        ):
            raise weights_error(path, "do not fit this version's features")
        self.featurizer = Featurizer(kb)
        self._lock = threading.Lock()
        self._questions: dict[str, tuple[QuestionText, np.ndarray, float]] = {}
        self._secrets: dict[int, tuple[SecretFacts, np.ndarray]] = {}

    @classmethod
    def load(cls, path: str | Path | None = None, kb: KnowledgeBase | None = None) -> LearnedModel:
        path = Path(path or DEFAULT_WEIGHTS)
        if not path.is_file():
            raise weights_error(path, "are missing")
        try:
            payload = store.read(path)
            return cls(payload, path, kb or load_kb())
        except WeightsError:
            raise
        except Exception as err:  # a truncated zip, a missing array, ...
            raise weights_error(path, f"cannot be read ({type(err).__name__}: {err})") from err

    def clear_caches(self) -> None:
        with self._lock:
            self._questions.clear()
            self._secrets.clear()

    # -- vectors ---------------------------------------------------------------------------
    @staticmethod
    def _mean(
        table: np.ndarray, vocab: dict[str, int], tokens: Sequence[str]
    ) -> tuple[np.ndarray, list[int]]:
        ids = [vocab[t] for t in tokens if t in vocab]
        if not ids:
            return np.zeros(table.shape[1], dtype=np.float32), ids
        return table[ids].mean(axis=0), ids

    def question(self, text: str) -> tuple[QuestionText, np.ndarray, float]:
        found = self._questions.get(text)
        if found is None:
            parsed = self.featurizer.question(text)
            vector, ids = self._mean(self.question_embedding, self.question_vocab, parsed.tokens)
            found = (parsed, vector, float(self.question_bias[ids].sum()))
            with self._lock:
                if len(self._questions) >= MAX_CACHED:
                    self._questions.clear()
                self._questions[text] = found
        return found

    def secret(self, noun: int) -> tuple[SecretFacts, np.ndarray]:
        found = self._secrets.get(noun)
        if found is None:
            facts = self.featurizer.secret(noun)
            found = (facts, self._mean(self.secret_embedding, self.secret_vocab, facts.tokens)[0])
            with self._lock:
                if len(self._secrets) >= MAX_CACHED:
                    self._secrets.clear()
                self._secrets[noun] = found
        return found

    # -- the network -----------------------------------------------------------------------
    def logits(self, q: np.ndarray, q_bias: np.ndarray, s: np.ndarray, m: np.ndarray) -> np.ndarray:
        h = np.concatenate([q, s, q * s, m], axis=1)
        for i, (weight, bias) in enumerate(self.layers):
            h = h @ weight.T + bias
            if i < len(self.layers) - 1:
                np.maximum(h, 0.0, out=h)
        return h[:, 0] + m @ self.wide + self.wide_bias + q_bias

    def p_yes(self, pairs: Sequence[tuple[int, str]]) -> np.ndarray:
        """P(yes) for (noun id, question text) pairs, batched."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        questions = [self.question(text) for _, text in pairs]
        secrets = [self.secret(noun) for noun, _ in pairs]
        q = np.stack([v for _, v, _ in questions])
        q_bias = np.array([b for _, _, b in questions], dtype=np.float32)
        s = np.stack([v for _, v in secrets])
        m = np.stack([self.featurizer.match(f, p) for (f, _), (p, _, _) in zip(secrets, questions)])
        return 1.0 / (1.0 + np.exp(-self.logits(q, q_bias, s, m)))


def weights_meta(path: str | Path | None = None) -> dict:
    """What a weights file says of itself (its training config, rows, held-out figures), read
    without loading the network; {} when the file is missing or unreadable."""
    import json
    import zipfile

    try:
        with zipfile.ZipFile(Path(path or DEFAULT_WEIGHTS)) as zf, zf.open("meta.npy") as f:
            return json.loads(np.lib.format.read_array(f, allow_pickle=False).tobytes().decode())
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return {}


_models: dict[Path, LearnedModel] = {}
_models_lock = threading.Lock()


def load_model(path: str | Path | None = None) -> LearnedModel:
    """The model at `path` (default: the shipped weights), loaded once per process."""
    path = Path(path or DEFAULT_WEIGHTS).resolve()
    with _models_lock:
        if path not in _models:
            _models[path] = LearnedModel.load(path)
        return _models[path]


class LearnedJudge(Judge):
    """Yes when the model's P(yes) reaches its threshold, else no; `unknown` only for a question
    with no words to read (or within `abstain` of the threshold, when asked to)."""

    def __init__(
        self, path: str | Path | None = None, *, abstain: float = 0.0, name: str | None = None
    ):
        self.model = load_model(path)
        self.kb = self.model.featurizer.kb
        if not 0.0 <= abstain < 0.5:
            raise ValueError(f"abstain must be in [0, 0.5), got {abstain}")
        self.abstain = abstain
        self.name = name or ("learned" if path is None else f"learned:{path}")
        self._nouns: dict[str, int | None] = {}

    def _noun(self, secret: str) -> int | None:
        if secret not in self._nouns:
            if len(self._nouns) >= MAX_CACHED:
                self._nouns.clear()
            self._nouns[secret] = self.kb.lookup(secret) if isinstance(secret, str) else None
        return self._nouns[secret]

    def check_secret(self, secret: str) -> None:
        if self._noun(secret) is None:
            raise UnknownSecretError(
                f"{secret!r} is not a noun of the knowledge base, which the learned judge "
                "reads its facts from"
            )

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        answers: list[JudgeAnswer | None] = [None] * len(requests)
        todo = []
        for i, r in enumerate(requests):
            noun = self._noun(r.secret) if isinstance(r.secret, str) else None
            if noun is None:
                answers[i] = JudgeAnswer(
                    Verdict.UNKNOWN, raw=f"unknown secret {str(r.secret)[:80]!r}"
                )
            elif not isinstance(r.question, str) or not self.model.question(r.question)[0].text:
                answers[i] = JudgeAnswer(Verdict.UNKNOWN, raw="unknown: no words to read")
            else:
                todo.append((i, noun, r.question))
        try:
            probabilities = self.model.p_yes([(noun, q) for _, noun, q in todo])
        except Exception as err:  # a judge must answer whatever it is given
            probabilities = [None] * len(todo)
            error = f"error: {type(err).__name__}"
        for (i, _, _), p in zip(todo, probabilities):
            answers[i] = (
                self._answer(p) if p is not None else JudgeAnswer(Verdict.UNKNOWN, raw=error)
            )
        return answers  # type: ignore[return-value]

    def _answer(self, p: float) -> JudgeAnswer:
        return probability_answer(p, self.model.threshold, self.abstain, "learned")
