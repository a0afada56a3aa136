"""What the learned judge reads: the knowledge base's facts about a secret, the question's text,
and where the two meet.

One home for the features that training (training/judge) and inference (games.judges.learned)
share, so the two cannot drift apart. Pure Python and numpy over the shipped knowledge base.

- Secret tokens: the noun's `relation:concept` facts under three sense policies, kept apart
  because a reader has the most common sense in mind first (`1:` the first sense, `d:` the
  dominant senses, `a:` every other sense), the lexicographer files and gloss words of its senses
  (same prefixes), the words of the noun and its frequency band.
- Question tokens: the normalised question, its words and word pairs, and the question form the
  knowledge base's grammar parses it as.
- Match features: for each relation, whether a word or phrase of the question is a concept the
  secret has under that relation (and how specific the most specific such concept is), gloss and
  own-word overlap, and the knowledge-base judge's grounded answer (yes +1, no -1, per relation).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from games import rules
from games.kb import DEFAULT_SENSE, RELATIONS, KnowledgeBase
from games.kb.knowledge import singular_candidates
from games.kb.questions import FUNCTION_WORDS, ground

MAX_QUESTION_CHARS = (
    1000  # the rest of a longer text is not read (the engine finds it invalid anyway)
)
MAX_GRAM = 3  # question phrases up to this many words are matched against concepts
SENSE_POLICIES = ("dominant", "any")  # match features are computed under each
_GLOSS_WORD = re.compile(r"[a-z][a-z-]+")
_PER_RELATION = 3  # matched, specificity of the most specific match, number of matches
_OFFSET_OVERLAP = len(SENSE_POLICIES) * len(RELATIONS) * _PER_RELATION
_OFFSET_KB = _OFFSET_OVERLAP + 4
MATCH_DIM = _OFFSET_KB + len(SENSE_POLICIES) * (len(RELATIONS) + 1) + 1


@dataclass(frozen=True)
class SecretFacts:
    noun: int
    tokens: tuple[str, ...]
    concepts: tuple[dict[str, tuple[tuple[int, float], ...]], ...]  # per sense policy
    concept_keys: tuple[frozenset, ...]  # the concepts of each policy, for a fast intersection
    features: tuple[frozenset, ...]  # feature ids per sense policy
    gloss: tuple[frozenset, ...]  # gloss words: dominant senses, every sense
    own: frozenset


@dataclass(frozen=True)
class QuestionText:
    text: str  # the normalised words, joined
    tokens: tuple[str, ...]
    grams: frozenset  # phrases (and their singulars) that may name a concept
    content: frozenset  # words that are not function words
    grounded: int | None  # the KB feature the question asks about, if it parses
    relation: int  # index into RELATIONS, len(RELATIONS) if it does not ground


class Featurizer:
    """Turns secrets and questions into tokens and match features over one knowledge base."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        coverage = kb.coverage(DEFAULT_SENSE).astype(np.float64)
        n = len(kb.nouns)
        # 0 for a concept every noun has, 1 for one that only a single noun has
        self.specificity = (np.log(n / (1.0 + coverage)) / math.log(n)).clip(0.0, 1.0)

    # -- secrets -----------------------------------------------------------------------
    def secret(self, noun: int) -> SecretFacts:
        kb = self.kb
        first = kb.feature_set(noun, "first")
        dominant = kb.feature_set(noun, DEFAULT_SENSE)
        every = kb.feature_set(noun, "any")
        tokens = {f"1:{kb.features[f]}" for f in first}
        tokens |= {f"d:{kb.features[f]}" for f in dominant}
        tokens |= {f"a:{kb.features[f]}" for f in every - dominant}
        dominant_senses = set(kb.senses(noun, DEFAULT_SENSE))
        gloss_dominant: set[str] = set()
        gloss_every: set[str] = set()
        for i, synset in enumerate(kb.senses(noun, "any")):
            prefix = "1" if i == 0 else "" if synset in dominant_senses else "a"
            tokens.add(f"lex{prefix}:{kb.synset_lexnames[synset]}")
            words = set(_GLOSS_WORD.findall(kb.synset_glosses[synset].lower())) - FUNCTION_WORDS
            tokens |= {f"g{prefix}:{w}" for w in words}
            (gloss_dominant if synset in dominant_senses else gloss_every).update(words)
        own = frozenset(kb.nouns[noun].split())
        tokens |= {f"w:{w}" for w in own}
        tokens.add(f"z:{int(kb.noun_zipf[noun])}")
        concepts = (self._concepts(dominant), self._concepts(every))
        return SecretFacts(
            noun=noun,
            tokens=tuple(sorted(tokens)),
            concepts=concepts,
            concept_keys=tuple(frozenset(table) for table in concepts),
            features=(dominant, every),
            gloss=(frozenset(gloss_dominant), frozenset(gloss_dominant | gloss_every)),
            own=own,
        )

    def _concepts(self, features: frozenset) -> dict[str, tuple[tuple[int, float], ...]]:
        table: dict[str, list[tuple[int, float]]] = {}
        for f in features:
            relation, concept = self.kb.features[f].split(":", 1)
            table.setdefault(concept, []).append(
                (RELATIONS.index(relation), float(self.specificity[f]))
            )
        return {c: tuple(v) for c, v in table.items()}

    # -- questions ---------------------------------------------------------------------
    def question(self, text: str) -> QuestionText:
        text = text[:MAX_QUESTION_CHARS] if isinstance(text, str) else ""
        words = rules.words(text)
        normalised = " ".join(words)
        tokens = {f"u:{w}" for w in words} | {f"b:{a} {b}" for a, b in zip(words, words[1:])}
        tokens.add(f"q:{normalised}")
        grams: set[str] = set()
        for size in range(1, MAX_GRAM + 1):
            for i in range(len(words) - size + 1):
                if size == 1 and words[i] in FUNCTION_WORDS:
                    continue
                gram = " ".join(words[i : i + size])
                grams.add(gram)
                grams.update(singular_candidates(gram))
        feature, raw = ground(self.kb, text)
        if feature is not None:
            relation = RELATIONS.index(raw.split(":", 1)[0])
            tokens.add(f"p:{RELATIONS[relation]}")
        else:
            relation = len(RELATIONS)
        return QuestionText(
            normalised,
            tuple(sorted(tokens)),
            frozenset(grams),
            frozenset(w for w in words if w not in FUNCTION_WORDS),
            feature,
            relation,
        )

    # -- where they meet -----------------------------------------------------------------
    def match(self, secret: SecretFacts, question: QuestionText) -> np.ndarray:
        out = np.zeros(MATCH_DIM, dtype=np.float32)
        for policy, table in enumerate(secret.concepts):
            base = policy * len(RELATIONS) * _PER_RELATION
            for gram in question.grams & secret.concept_keys[policy]:
                for relation, specificity in table[gram]:
                    at = base + relation * _PER_RELATION
                    out[at] = 1.0
                    out[at + 1] = max(out[at + 1], specificity)
                    out[at + 2] += 1.0
        out[_OFFSET_OVERLAP] = bool(question.content & secret.gloss[0])
        out[_OFFSET_OVERLAP + 1] = bool(question.content & secret.gloss[1])
        out[_OFFSET_OVERLAP + 2] = bool(question.content & secret.own)
        out[_OFFSET_OVERLAP + 3] = math.log1p(len(question.content))
        for policy, features in enumerate(secret.features):
            at = _OFFSET_KB + policy * (len(RELATIONS) + 1) + question.relation
            if question.grounded is None:
                out[at] = 1.0
            else:
                out[at] = 1.0 if question.grounded in features else -1.0
        out[-1] = 1.0
        return out
