"""A candidate pool and every knowledge-base question that tells its words apart.

For a pool of candidate secrets and a sense mode, `CandidateModel` holds:
- the askable questions: each feature that splits the pool, phrased so the KB judge grounds
  it back to the same feature, plus a guess ("Is it a dog?") for every pool word;
- `yes` (pool x questions): the KB judge would answer yes about that candidate;
- `named` (pool x questions): the question names the candidate, so the engine's rules end the
  game as a win before any judge sees it ("Is it a kind of dog?" names "dog").
So a question has three outcomes per candidate: finished, yes, no — exactly what a game
against the KB judge in the same sense mode produces.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

from games import rules
from games.kb.knowledge import DEFAULT_SENSE, KnowledgeBase, check_sense
from games.kb.questions import FUNCTION_WORDS, ground, phrase


def _column_signature(matrix: sp.csc_matrix, j: int) -> bytes:
    return matrix.indices[matrix.indptr[j] : matrix.indptr[j + 1]].tobytes()


class CandidateModel:
    def __init__(
        self, kb: KnowledgeBase, pool: Iterable[str] | None = None, sense: str = DEFAULT_SENSE
    ):
        self.kb = kb
        self.sense = check_sense(sense)
        self.words, nouns, self.skipped = self._resolve_pool(pool)
        self.nouns = np.array(nouns, dtype=np.int64)
        self.word_index = {w: i for i, w in enumerate(self.words)}
        self.pool_features = kb.matrix(self.sense)[self.nouns].tocsc()  # pool x all KB features
        self._variants = self._variant_table()
        self._build_questions()

    # -- pool ------------------------------------------------------------------------
    def _resolve_pool(self, pool: Iterable[str] | None) -> tuple[list[str], list[int], list[str]]:
        if pool is None:
            return list(self.kb.nouns), list(range(len(self.kb.nouns))), []
        words, nouns, skipped, seen = [], [], [], set()
        for word in pool:
            noun = self.kb.lookup(word) if isinstance(word, str) else None
            surface = rules.clean_word(word) if noun is not None else ""
            if noun is None:
                skipped.append(word)
            elif surface not in seen:
                # "mice" and "mouse" stay two candidates: the same noun, but only naming the
                # secret's own spelling (or its plural/singular) wins the game
                seen.add(surface)
                words.append(surface)
                nouns.append(noun)
        return words, nouns, skipped

    # -- questions -------------------------------------------------------------------
    def _worth_asking(self, feature: int) -> bool:
        """Not a question about a function word ("Is it related to so?", "Is it up?")."""
        concept = self.kb.features[feature].split(":", 1)[1]
        return len(concept) > 2 and concept.split(" ")[0] not in FUNCTION_WORDS

    def _build_questions(self) -> None:
        kb, n = self.kb, len(self.words)
        texts, features, guess_for = [], [], []
        self.guess_question = np.full(n, -1, dtype=np.int64)
        for candidate, word in enumerate(self.words):  # "Is it a dog?" for every pool word
            text = phrase("isa", word, guess=True)
            feature = self.ground(text)
            if feature is not None and kb.features[feature].startswith("isa:"):
                self.guess_question[candidate] = len(texts)
                texts.append(text)
                features.append(feature)
                guess_for.append(candidate)
        guessed = set(features)
        counts = np.diff(self.pool_features.indptr)
        splitting = np.nonzero((counts > 0) & (counts < n))[0]
        # Prefer the commonest wording among features with the same answers ("artifact", not
        # "artefact"); a feature some guess already asks is not asked again in other words.
        order = sorted(splitting.tolist(), key=lambda f: (-float(kb.feature_zipf[f]), f))
        seen: set[bytes] = set()
        for feature in order:
            if feature in guessed or not self._worth_asking(feature):
                continue
            signature = _column_signature(self.pool_features, feature)
            if signature in seen:
                continue
            relation, concept = kb.features[feature].split(":", 1)
            text = phrase(relation, concept)
            if self.ground(text) == feature:
                seen.add(signature)
                texts.append(text)
                features.append(feature)
                guess_for.append(-1)
        self.questions = texts
        self.question_feature = np.array(features, dtype=np.int64)
        self.question_guess = np.array(guess_for, dtype=np.int64)
        self.question_index = {rules.normalise_question(t): i for i, t in enumerate(texts)}
        self.named = self._naming_matrix(texts)
        holds = self.pool_features[:, self.question_feature].tocsr().astype(np.float64)
        self.yes = (
            holds - holds.multiply(self.named)
        ).tocsr()  # a named candidate finishes instead
        self.yes.eliminate_zeros()
        self.yes_t = self.yes.T.tocsr()
        self.named_t = self.named.T.tocsr()

    # -- naming (the engine's rule: a question naming the secret wins) ------------------
    def _variant_table(self) -> tuple[dict[str, list[int]], int]:
        table: dict[str, list[int]] = {}
        for i, word in enumerate(self.words):
            for variant in rules.secret_variants(word):
                table.setdefault(variant, []).append(i)
        longest = max((v.count(" ") + 1 for v in table), default=1)
        return table, longest

    def named_by(self, text: str) -> list[int]:
        """Pool candidates whose name (or plural/singular) the text contains as whole words."""
        table, longest = self._variants
        tokens = rules.words(text)
        found = set()
        for size in range(1, longest + 1):
            for start in range(len(tokens) - size + 1):
                hit = table.get(" ".join(tokens[start : start + size]))
                if hit:
                    found.update(hit)
        return sorted(found)

    def _naming_matrix(self, texts: list[str]) -> sp.csr_matrix:
        rows, cols = [], []
        for q, text in enumerate(texts):
            for candidate in self.named_by(text):
                rows.append(candidate)
                cols.append(q)
        data = np.ones(len(rows), dtype=np.float64)
        return sp.csr_matrix((data, (rows, cols)), shape=(len(self.words), len(texts)))

    # -- questions from outside (history, humans) ------------------------------------------
    def ground(self, text: str) -> int | None:
        """The KB feature a question text grounds to, or None."""
        return ground(self.kb, text)[0]

    def question_id(self, text: str) -> int | None:
        return self.question_index.get(rules.normalise_question(text))

    def outcome_masks(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(predicted yes, named) boolean masks over the pool for any question text."""
        named = np.zeros(len(self.words), dtype=bool)
        named[self.named_by(text)] = True
        q = self.question_index.get(rules.normalise_question(text))
        if q is not None:
            yes = np.zeros(len(self.words), dtype=bool)
            yes[self.yes_t.indices[self.yes_t.indptr[q] : self.yes_t.indptr[q + 1]]] = True
            return yes, named
        feature = self.ground(text)
        if feature is None:
            return None
        col = self.pool_features
        yes = np.zeros(len(self.words), dtype=bool)
        yes[col.indices[col.indptr[feature] : col.indptr[feature + 1]]] = True
        return yes & ~named, named


_models: OrderedDict = OrderedDict()
_models_lock = threading.Lock()


def candidate_model(
    kb: KnowledgeBase, pool: Iterable[str] | None = None, sense: str = DEFAULT_SENSE
) -> CandidateModel:
    """A CandidateModel, cached for the last few (kb, pool, sense) combinations."""
    pool_key = None if pool is None else tuple(pool)
    key = (id(kb), pool_key, sense)
    with _models_lock:
        if key in _models:
            _models.move_to_end(key)
            return _models[key]
    model = CandidateModel(kb, pool_key, sense)
    with _models_lock:
        _models[key] = model
        while len(_models) > 4:
            _models.popitem(last=False)
    return model
