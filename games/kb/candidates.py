"""A candidate pool and every knowledge-base question that tells its words apart.

For a pool of candidate secrets (the words given, exactly; by default the KB's nouns that are
words, not numbers or codes) and a sense mode, `CandidateModel` holds:
- the askable questions: each feature that splits the pool, phrased as a person asks it (the
  article or plural its noun takes: "Does it have stuff?", "Is it related to animals?"; no vague
  topic, rare word or taxon) and only if the KB judge grounds that text back to the same
  feature, plus a guess ("Is it a dog?") for every pool word;
- `yes` (pool x questions): the KB judge would answer yes about that candidate;
- `named` (pool x questions): the question names the candidate, so the engine's rules end the
  game as a win before any judge sees it ("Is it a kind of dog?" names "dog").
So a question has three outcomes per candidate: finished, yes, no — exactly what a game
against the KB judge in the same sense mode produces.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

from games import text as gametext
from games.kb.knowledge import DEFAULT_SENSE, KnowledgeBase, check_sense
from games.kb.questions import COUNT, FUNCTION_WORDS, ground, noun_number, phrase, plural_phrase
from games.kb.wordlists import dbrl_list_names, dbrl_words

# Too general to be "related to" ("Is it related to attribute?"): names of WordNet's broadest noun
# files (games.kb.features.LEXFILE_CONCEPTS) that read as no topic even in the plural. The others
# are asked in the plural ("Is it related to artifacts?", "... to events?").
# fmt: off
VAGUE_TOPICS = frozenset([
    "action", "attribute", "group", "motive", "person", "phenomenon", "possession", "process",
    "quantity", "relation", "state", "thought",
])
# fmt: on
MIN_CONCEPT_ZIPF = 2.5  # rarer wholes, parts and topics are not asked about ("equidae")
TAXON = ("genus ", "family ", "order ", "class ", "phylum ", "subfamily ", "suborder ", "tribe ")


_PLAIN = re.compile(r"[a-z]+(?:[ -][a-z]+)*")
_VOWEL = re.compile(r"[aeiouy]")
_ROMAN = re.compile(r"m*(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})")
MAX_CODE_CHARS = 5


@functools.cache
def _listed_pairs() -> frozenset[str]:
    """The two-letter words of the shipped benchmark lists ("ox", "ad")."""
    return frozenset(w for n in dbrl_list_names() for w in dbrl_words(n) if len(w) == 2)


def is_plain_word(kb: KnowledgeBase, noun: int) -> bool:
    """Not a number ("3d", "h2o"), a letter, a code without a vowel ("dvd") or of two letters
    ("aa"; but "ox"), nor, when no sense is named by the word itself, a roman numeral ("iii") or
    initials ("ceo": chief executive officer) — WordNet keeps the full name first."""
    key = kb.nouns[noun]
    if not _PLAIN.fullmatch(key) or len(key) < 2 or not _VOWEL.search(key):
        return False
    if len(key) == 2:
        return key in _listed_pairs()
    if len(key) > MAX_CODE_CHARS or " " in key:
        return True
    heads = [kb.synset_names[s].rsplit(".", 2)[0] for s in kb.senses(noun, "any")]
    if key in heads:
        return True
    if _ROMAN.fullmatch(key):
        return False
    for head in heads:
        parts = re.split(r"[_-]", head)
        content = [p for p in parts if p not in FUNCTION_WORDS]
        if len(parts) > 1 and key in {"".join(p[:1] for p in w) for w in (parts, content)}:
            return False
    return True


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
        self._irregular = {single: many for many, single in kb.plurals.items()}
        self._build_questions()

    # -- pool ------------------------------------------------------------------------
    def _resolve_pool(self, pool: Iterable[str] | None) -> tuple[list[str], list[int], list[str]]:
        if pool is None:  # the KB's nouns that are words: no number, letter, code or numeral
            nouns = [n for n in range(len(self.kb.nouns)) if is_plain_word(self.kb, n)]
            return [self.kb.nouns[n] for n in nouns], nouns, []
        words, nouns, skipped, seen = [], [], [], set()
        for word in pool:
            noun = self.kb.lookup(word) if isinstance(word, str) else None
            surface = gametext.clean_word(word) if noun is not None else ""
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
        """Not a question about a function word ("Is it related to so?", "Is it up?"), a vague
        topic ("Is it related to attribute?"), a rare word or a taxon as a whole, part or topic
        ("Is it part of an equidae?", "... of a genus hydrangea?")."""
        relation, concept = self.kb.features[feature].split(":", 1)
        if len(concept) <= 2 or concept.split(" ")[0] in FUNCTION_WORDS:
            return False
        forms = gametext.singular_forms(concept)
        vague = VAGUE_TOPICS.intersection([concept, *forms])  # "relations"
        if relation == "rel" and vague:
            return False
        if relation in ("has", "part", "rel"):
            rare = float(self.kb.feature_zipf[feature]) < MIN_CONCEPT_ZIPF
            return not (rare or concept.startswith(TAXON))
        return True

    def _text(self, feature: int) -> str | None:
        """The question asking a feature, with the article (or plural) its noun takes; None
        when that text does not ground back to the same feature."""
        relation, concept = self.kb.features[feature].split(":", 1)
        number = plural = None
        if relation in ("has", "part", "rel"):
            irregular = self._irregular.get(concept.rpartition(" ")[2])
            plural = plural_phrase(concept, irregular) if irregular else None
            number = noun_number(concept, plural)
            if relation == "rel" and irregular:  # "mice" would not name a secret "mouse"
                number = None if number == COUNT else number
        text = phrase(relation, concept, number=number, plural=plural)
        return text if self.ground(text) == feature else None

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
            text = self._text(feature)
            if text is not None:
                seen.add(signature)
                texts.append(text)
                features.append(feature)
                guess_for.append(-1)
        self.questions = texts
        self.question_feature = np.array(features, dtype=np.int64)
        self.question_guess = np.array(guess_for, dtype=np.int64)
        self.question_index = {gametext.normalise_question(t): i for i, t in enumerate(texts)}
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
            for variant in gametext.secret_variants(word):
                table.setdefault(variant, []).append(i)
        longest = max((v.count(" ") + 1 for v in table), default=1)
        return table, longest

    def named_by(self, text: str) -> list[int]:
        """Pool candidates whose name (or plural/singular) the text contains as whole words."""
        table, longest = self._variants
        tokens = gametext.words(text)
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
        return self.question_index.get(gametext.normalise_question(text))

    def outcome_masks(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(predicted yes, named) boolean masks over the pool for any question text."""
        named = np.zeros(len(self.words), dtype=bool)
        named[self.named_by(text)] = True
        q = self.question_index.get(gametext.normalise_question(text))
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
