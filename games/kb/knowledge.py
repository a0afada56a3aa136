"""The knowledge base at run time: nouns, their WordNet senses and `relation:concept` features.

Reads only the shipped data file (games/kb/data/wordnet_kb.npz, written by games.kb.build);
no nltk, no WordNet, no download. A noun's features depend on which of its senses count:

- `first`    — the most frequent sense only;
- `dominant` — the senses whose SemCor tag count, add-one smoothed, is at least DOMINANT_SHARE
               of the first sense's (the default: the senses a typical speaker has in mind;
               "bank" is both a river bank and a financial institution, "car" only an
               automobile). Smoothing keeps every sense of a word with little or no tag
               evidence ("shaker": tycoon, Shaker, salt shaker).
- `any`      — every noun sense ("bank" is also an array, a container for coins, ...).
"""

from __future__ import annotations

import threading
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from games import text as gametext
from games.kb import store
from games.loading import once_per_path

DATA_PATH = Path(__file__).resolve().parent / "data" / "wordnet_kb.npz"
SENSE_MODES = ("first", "dominant", "any")
DEFAULT_SENSE = "dominant"
DOMINANT_SHARE = 1 / 3
RELATIONS = ("isa", "has", "part", "made", "rel", "prop")
LEMMA_SEPARATOR = "|"  # between a synset's lemma keys in the data file (keys hold no "|")


@lru_cache(maxsize=1 << 16)
def normalise_key(text: str) -> str:
    """The form every noun and concept is stored under: lower case, words joined by spaces."""
    return " ".join(gametext.words(text.replace("_", " ")))


@lru_cache(maxsize=1 << 16)
def singular_candidates(key: str) -> tuple[str, ...]:
    """Plausible singulars of a key's last word, most likely first ("glasses" -> glass)."""
    head, _, last = key.rpartition(" ")
    return tuple(f"{head} {f}" if head else f for f in gametext.singular_forms(last))


def check_sense(sense: str) -> str:
    if sense not in SENSE_MODES:
        raise ValueError(f"unknown sense mode {sense!r}; expected one of {', '.join(SENSE_MODES)}")
    return sense


class KnowledgeBase:
    """Nouns x features, per sense mode. Thread-safe for reading; caches are filled lazily."""

    def __init__(self, payload: dict):
        self.meta: dict = payload["meta"]
        self.nouns: list[str] = payload["nouns"]
        self.noun_index = {n: i for i, n in enumerate(self.nouns)}
        self.noun_zipf: np.ndarray = payload["noun_zipf"]
        self.noun_via: list[str] = payload["noun_via"]
        self._noun_senses: store.Rows = payload["noun_senses"]
        self._noun_counts: store.Rows = payload["noun_counts"]
        self._noun_own: store.Rows = payload["noun_own"]
        self.synset_names: list[str] = payload["synset_names"]
        self.synset_lexnames: list[str] = payload["synset_lexnames"]
        self._synset_lemmas: list[str] = payload["synset_lemmas"]  # "dune|sand dune"
        self.synset_glosses: list[str] = payload["synset_glosses"]
        self._synset_features: store.Rows = payload["synset_features"]
        self.features: list[str] = payload["features"]
        self.feature_index = {f: i for i, f in enumerate(self.features)}
        self.feature_zipf: np.ndarray = payload["feature_zipf"].astype(
            np.float32
        )  # concept frequency
        self.aliases: dict[str, str] = payload["aliases"]
        self.plurals: dict[str, str] = payload["plurals"]
        self.top_nouns: list[str] = payload["top_nouns"]  # frequent words that are WordNet nouns
        self.concepts: dict[str, dict[str, int]] = {r: {} for r in RELATIONS}
        relation_of = []
        for i, feature in enumerate(self.features):
            relation, concept = feature.split(":", 1)
            self.concepts[relation][concept] = i
            relation_of.append(RELATIONS.index(relation))
        self.feature_relation = np.array(relation_of, dtype=np.int8)
        for table in self.concepts.values():  # "the netherlands" also answers to "netherlands"
            for concept, feature in list(table.items()):
                head, _, rest = concept.partition(" ")
                if rest and head in ("the", "a", "an", "one"):
                    table.setdefault(rest, feature)
        self._lock = threading.Lock()
        self._matrices: dict[str, sp.csr_matrix] = {}
        self._feature_sets: dict[str, dict[int, frozenset]] = {m: {} for m in SENSE_MODES}

    @classmethod
    def load(cls, path: str | Path = DATA_PATH) -> KnowledgeBase:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"knowledge-base data file {path} is missing; build it with "
                "`python -m games.kb.build`"
            )
        return cls(store.read(path))

    def __repr__(self) -> str:
        return f"<KnowledgeBase {len(self.nouns)} nouns, {len(self.features)} features>"

    # -- words ------------------------------------------------------------------
    def _variants(self, word: str) -> list[str]:
        key = normalise_key(word)
        if not key:
            return []
        forms = [key, *singular_candidates(key)]
        if key in self.plurals:
            forms.append(self.plurals[key])
        return forms

    def lookup(self, word: str) -> int | None:
        """The noun id of a word (any case, plural, spaces or underscores, known spelling)."""
        for form in self._variants(word):
            form = self.aliases.get(form, form)
            if form in self.noun_index:
                return self.noun_index[form]
        return None

    def lemma_senses(self, word: str) -> list[int]:
        """Synset ids that have the word as a lemma (any case, plural, spaces or underscores),
        KB noun or not: dune.n.01 for "sand dunes"."""
        for form in self._variants(word):
            if form in self._lemma_index:
                return self._lemma_index[form]
        return []

    def synset_lemmas(self, synset: int) -> list[str]:
        """A synset's lemmas as noun keys, WordNet's order ("dune", "sand dune")."""
        return self._synset_lemmas[synset].split(LEMMA_SEPARATOR)

    @cached_property
    def _lemma_index(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for synset, lemmas in enumerate(self._synset_lemmas):
            for key in lemmas.split(LEMMA_SEPARATOR):
                index.setdefault(key, []).append(synset)
        return index

    def concept(self, relation: str, phrase: str) -> int | None:
        """The feature id of `relation:phrase`, the phrase normalised like a noun."""
        table = self.concepts.get(relation)
        if table is None:
            return None
        for form in self._variants(phrase):
            for candidate in (form, self.aliases.get(form)):
                if candidate in table:
                    return table[candidate]
        return None

    # -- senses and features ---------------------------------------------------------
    def senses(self, noun: int, sense: str = DEFAULT_SENSE) -> list[int]:
        """Synset ids of the noun's senses that count in this sense mode, most frequent first."""
        ids = self._noun_senses[noun]
        if check_sense(sense) == "any" or len(ids) <= 1:
            return ids.tolist()
        if sense == "first":
            return ids[:1].tolist()
        smoothed = self._noun_counts[noun] + 1.0
        keep = smoothed >= DOMINANT_SHARE * smoothed[0]
        return ids[keep].tolist()

    def matrix(self, sense: str = DEFAULT_SENSE) -> sp.csr_matrix:
        """Boolean nouns x features matrix: which features hold for which noun."""
        check_sense(sense)
        with self._lock:
            if sense not in self._matrices:
                self._matrices[sense] = self._build_matrix(sense)
            return self._matrices[sense]

    def _build_matrix(self, sense: str) -> sp.csr_matrix:
        rows, cols = [], []
        for noun in range(len(self.nouns)):
            active = self.senses(noun, sense)
            rows += [noun] * len(active)
            cols += active
        choose = sp.csr_matrix(
            (np.ones(len(rows), dtype=np.float32), (rows, cols)),
            shape=(len(self.nouns), len(self.synset_names)),
        )
        feats = self._synset_features
        by_synset = sp.csr_matrix(
            (np.ones(len(feats.flat), dtype=np.float32), feats.flat, feats.ptr),
            shape=(len(self.synset_names), len(self.features)),
        )
        own = self._noun_own
        own_matrix = sp.csr_matrix(
            (np.ones(len(own.flat), dtype=np.float32), own.flat, own.ptr),
            shape=(len(self.nouns), len(self.features)),
        )
        out = ((choose @ by_synset + own_matrix) > 0).tocsr()
        out.sort_indices()
        return out

    def feature_set(self, noun: int, sense: str = DEFAULT_SENSE) -> frozenset:
        cache = self._feature_sets[check_sense(sense)]
        found = cache.get(noun)
        if found is None:
            m = self.matrix(sense)
            found = frozenset(m.indices[m.indptr[noun] : m.indptr[noun + 1]].tolist())
            cache[noun] = found
        return found

    def holds(self, noun: int, feature: int, sense: str = DEFAULT_SENSE) -> bool:
        return feature in self.feature_set(noun, sense)

    def coverage(self, sense: str = DEFAULT_SENSE) -> np.ndarray:
        """How many nouns each feature holds for."""
        return np.bincount(self.matrix(sense).indices, minlength=len(self.features))

    @cached_property
    def concept_coverage(self) -> dict[str, int]:
        """Concept word -> the most nouns any of its features covers (default sense mode)."""
        counts = self.coverage(DEFAULT_SENSE)
        out: dict[str, int] = {}
        for feature, n in zip(self.features, counts.tolist()):
            concept = feature.split(":", 1)[1]
            out[concept] = max(out.get(concept, 0), n)
        return out

    @cached_property
    def concept_rank(self) -> dict[str, float]:
        """Concept word -> how useful it is to suggest: word frequency (zipf) plus log10 of
        the nouns it covers, so "car" comes before "caravansary" and "animal" before "aardvark"."""
        zipf = {f.split(":", 1)[1]: float(z) for f, z in zip(self.features, self.feature_zipf)}
        return {c: zipf[c] + float(np.log10(1 + n)) for c, n in self.concept_coverage.items()}

    # -- descriptions ------------------------------------------------------------
    def describe(self, word: str, sense: str = DEFAULT_SENSE) -> dict[str, list[str]]:
        """relation -> concepts that hold for the word (empty if the word is unknown)."""
        noun = self.lookup(word)
        out: dict[str, list[str]] = {r: [] for r in RELATIONS}
        if noun is None:
            return out
        for feature in sorted(self.feature_set(noun, sense)):
            relation, concept = self.features[feature].split(":", 1)
            out[relation].append(concept)
        return out

    def definitions(self, word: str, sense: str = DEFAULT_SENSE) -> list[str]:
        noun = self.lookup(word)
        return [] if noun is None else [self.synset_glosses[s] for s in self.senses(noun, sense)]


@once_per_path(DATA_PATH)
def load_kb(path: Path) -> KnowledgeBase:
    """The knowledge base from the data file (default: the shipped one), loaded once per process
    and path."""
    return KnowledgeBase.load(path)
