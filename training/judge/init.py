"""Starting embeddings from the knowledge base alone (no answers): `init=kb-svd`.

Secret tokens start from a truncated SVD of the tf-idf noun × token matrix over the knowledge
base's nouns, the held-out secrets left out, so two tokens that the same kinds of nouns have start
close together even when few training secrets have them. A question word starts at the mean of
the secret tokens that name it (a concept or gloss word holding it), so the product q * s starts
out large where the question names what the secret has.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from games.judges.facts import Featurizer
from games.kb import KnowledgeBase

STD = 0.1  # the scale of the random initialisation, kept


def kb_svd(
    kb: KnowledgeBase,
    secret_vocab: list[str],
    question_vocab: list[str],
    dim: int,
    *,
    held_out: Collection[int],
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(secret, question) embedding tables, row 0 the zero padding row."""
    featurizer = Featurizer(kb)
    index = {t: i for i, t in enumerate(secret_vocab)}
    docs = [
        {index[t] for t in featurizer.secret(noun).tokens if t in index}
        for noun in range(len(kb.nouns))
        if noun not in held_out
    ]
    vectors = _lsa(docs, len(index), dim, seed)
    secret = _scaled(vectors)
    question = _scaled(_question_words(question_vocab, secret_vocab, vectors, dim, seed))
    return _padded(secret), _padded(question)


def _lsa(docs: list[set[int]], n_tokens: int, dim: int, seed: int) -> np.ndarray:
    """Token vectors (n_tokens × dim) of a truncated SVD of the tf-idf document × token matrix
    (each document's row L2-normalised); random ones when there are too few to factor."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.linalg import svds

    rows = [r for r, doc in enumerate(docs) for _ in doc]
    cols = [t for doc in docs for t in doc]
    matrix = csr_matrix(
        (np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(len(docs), n_tokens)
    )
    df = np.asarray((matrix > 0).sum(axis=0)).ravel()
    matrix = matrix.multiply(np.log((1.0 + len(docs)) / (1.0 + df))[None, :]).tocsr()
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel()).clip(1e-9)
    matrix = csr_matrix(matrix.multiply(1.0 / norms[:, None]))
    k = min(dim, min(matrix.shape) - 1)
    if k < 1 or matrix.nnz == 0:
        return np.random.default_rng(seed).normal(0.0, 1.0, (n_tokens, dim))
    _, sigma, vt = svds(matrix, k=k, random_state=seed)
    vectors = np.zeros((n_tokens, dim))
    vectors[:, :k] = (vt.T * np.sqrt(sigma)[None, :])[:, ::-1]
    return vectors


def _question_words(
    question_vocab: list[str], secret_vocab: list[str], vectors: np.ndarray, dim: int, seed: int
) -> np.ndarray:
    """A question word (`u:wood`) at the mean of the secret tokens naming it; other question
    tokens random, at the same scale."""
    naming: dict[str, list[int]] = {}
    for i, token in enumerate(secret_vocab):
        for word in set(token.rsplit(":", 1)[-1].split()):
            naming.setdefault(word, []).append(i)
    scale = vectors.std() or 1.0
    out = np.random.default_rng(seed).normal(0.0, scale, (len(question_vocab), dim))
    for q, token in enumerate(question_vocab):
        if token.startswith("u:") and token[2:] in naming:
            out[q] = vectors[naming[token[2:]]].mean(axis=0)
    return out


def _scaled(table: np.ndarray) -> np.ndarray:
    return (table * (STD / (table.std() or 1.0))).astype(np.float32)


def _padded(table: np.ndarray) -> np.ndarray:
    return np.vstack([np.zeros((1, table.shape[1]), dtype=np.float32), table])
