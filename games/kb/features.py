"""Per-synset features from the WordNet graph (build time only; needs nltk).

A feature is `relation:concept`, where the concept is a normalised word (a WordNet lemma, or a
gloss word). Relations, and the question forms that ask them (see games.kb.questions):

- `isa`  — a lemma of the synset or of any hypernym / instance hypernym ("Is it a kind of X?").
- `has`  — a part, member or substance meronym of the synset or of any hypernym, or a close,
           not too generic hypernym of that meronym ("Does it have wheels?": a car is a wheeled
           vehicle, which has wheels; "Does it have an engine?": car has an automobile engine).
- `part` — the inverse: the synset (or a close specific hypernym) is a meronym of X or of a
           hypernym of X, X at most PART_OF_LEVELS hyponym levels below that holonym ("Is it
           part of a car?": wheel is part of wheeled vehicle, car is 3 levels below it).
- `made` — a substance meronym (and its close hypernyms), or a noun after "made of/from" in
           the gloss.
           Parts and wholes are named by the lemmas that evoke them (see `evoked`), and none
           are inherited from generic wholes (every "whole" has "a part" and "a section").
- `rel`  — a noun of the gloss ("Is it related to water?"), the plain name of the synset's
           lexicographer file ("Is it related to food?" for every noun.food synset), a topic
           or usage domain of it or a hypernym ("medicine"), a noun derivationally related
           to one of its lemmas ("garden" for gardener).
- `prop` — an adjective of the gloss ("Is it small?").
"""

from __future__ import annotations

import re
from collections import Counter

from games.kb.knowledge import DOMINANT_SHARE, normalise_key

# Plain-word names of the noun lexicographer files ("Is it related to food?").
LEXFILE_CONCEPTS = {
    "noun.act": "action",
    "noun.animal": "animal",
    "noun.artifact": "artifact",
    "noun.attribute": "attribute",
    "noun.body": "body",
    "noun.cognition": "thought",
    "noun.communication": "communication",
    "noun.event": "event",
    "noun.feeling": "feeling",
    "noun.food": "food",
    "noun.group": "group",
    "noun.location": "place",
    "noun.motive": "motive",
    "noun.object": "nature",
    "noun.person": "person",
    "noun.phenomenon": "phenomenon",
    "noun.plant": "plant",
    "noun.possession": "possession",
    "noun.process": "process",
    "noun.quantity": "quantity",
    "noun.relation": "relation",
    "noun.shape": "shape",
    "noun.state": "state",
    "noun.substance": "substance",
    "noun.time": "time",
}

# Depth: the longest hypernym path up to "entity" (entity 0, physical entity 1, object 2, ...).
MIN_MERONYM_DEPTH = 5  # "Does it have a device?" yes, "Does it have an object?" not asked
MIN_HOLONYM_DEPTH = 4  # parts of "whole" (depth 3: a part, a section) are not inherited
MERONYM_LEVELS = 2  # how far above a meronym "Does it have X?" still applies
PART_OF_LEVELS = 3  # how far below a holonym "Is it part of X?" still applies ...
MAX_PART_OF_NOUNS = 150  # ... unless that reaches more KB senses (then fewer levels)
MADE_OF = re.compile(r"\bmade (?:out of|of|from|with) ((?:[a-z-]+ ?){1,4})")
# fmt: off
GLOSS_STOP = frozenset(
    [
        "a", "an", "the", "of", "or", "and", "to", "in", "on", "at", "by", "for", "with", "from",
        "as", "is", "are", "be", "been", "being", "that", "which", "who", "whom", "whose", "this",
        "these", "those", "it", "its", "their", "his", "her", "one", "two", "three", "some", "any",
        "all", "each", "every", "other", "another", "such", "more", "most", "less", "many", "much",
        "few", "several", "no", "not", "only", "very", "usually", "especially", "often",
        "something", "someone", "somebody", "thing", "things", "kind", "kinds", "type", "types",
        "sort", "form", "forms", "part", "parts", "way", "ways", "use", "used", "using", "usage",
        "make", "made", "making", "having", "have", "has", "etc", "e", "g", "i.e", "eg", "person",
        "people", "amount", "number", "group", "member", "members", "act", "state", "quality",
        "instance", "example", "containing", "consisting", "also", "main", "common", "four",
        "five", "six", "seven", "eight", "nine", "ten", "hundred", "thousand", "first", "second",
        "third", "like", "various", "certain", "related",
    ]
)
# fmt: on
MIN_GLOSS_ZIPF = 3.0  # gloss words rarer than this are not asked about
MIN_GLOSS_SENSES = 3  # nor those in fewer glosses


class SynsetFeatures:
    """Computes and memoises the feature keys of noun synsets of one WordNet reader."""

    def __init__(self, wn, kb_senses: set, zipf):
        self.wn = wn
        self.kb_senses = kb_senses  # synsets that are senses of knowledge-base nouns
        self.zipf = zipf
        self._up: dict = {}
        self._depths: dict = {}
        self._relations: dict[str, str | None] = {}
        self._evoking: dict[str, set] = {}
        self._below = self._holonym_index()
        self._gloss_words = self._gloss_vocabulary()

    # -- graph helpers ---------------------------------------------------------
    def up(self, synset) -> frozenset:
        """The synset and all its hypernyms and instance hypernyms."""
        found = self._up.get(synset)
        if found is None:
            found = frozenset({synset}).union(
                *(self.up(h) for h in synset.hypernyms() + synset.instance_hypernyms())
            )
            self._up[synset] = found
        return found

    @staticmethod
    def meronyms(synset) -> list:
        return synset.part_meronyms() + synset.member_meronyms() + synset.substance_meronyms()

    @staticmethod
    def holonyms(synset) -> list:
        return synset.part_holonyms() + synset.member_holonyms() + synset.substance_holonyms()

    @staticmethod
    def concepts(synset) -> set[str]:
        """Every lemma of the synset: "Is it an automobile?" is yes for a car."""
        return {normalise_key(name) for name in synset.lemma_names()} - {""}

    def evoked(self, synset) -> set[str]:
        """The lemmas that bring this synset to mind: its first lemma, and each other lemma
        whose first sense it is, or a sense tagged at least DOMINANT_SHARE as often as that
        first sense. Parts and wholes are named by these, so a person "has a body" but not
        "a chassis" (a rare, untagged sense of that word)."""
        names = synset.lemma_names()
        keep = [names[0]] + [n for n in names[1:] if synset in self._evoking_senses(n)]
        return {normalise_key(n) for n in keep} - {""}

    def _evoking_senses(self, lemma: str) -> set:
        found = self._evoking.get(lemma)
        if found is None:
            senses = [
                (s, max(lem.count() for lem in s.lemmas() if lem.name() == lemma))
                for s in self.wn.synsets(lemma, "n")
                if lemma in s.lemma_names()
            ]
            first = senses[0][1] if senses else 0
            found = {
                s
                for i, (s, c) in enumerate(senses)
                if i == 0 or (c > 0 and c >= DOMINANT_SHARE * first)
            }
            self._evoking[lemma] = found
        return found

    def _depth(self, synset) -> int:
        if synset not in self._depths:
            self._depths[synset] = synset.max_depth()
        return self._depths[synset]

    def _close_up(self, synset) -> set:
        """The synset and its hypernyms up to MERONYM_LEVELS above, the generic ones left out."""
        out, frontier = {synset}, {synset}
        for _ in range(MERONYM_LEVELS):
            frontier = {h for n in frontier for h in n.hypernyms() + n.instance_hypernyms()}
            out |= {h for h in frontier if self._depth(h) >= MIN_MERONYM_DEPTH}
        return out

    def _holonym_index(self) -> dict:
        """holonym synset -> KB senses at most PART_OF_LEVELS (fewer if too many) levels below."""
        by_level: dict = {}
        for sense in self.kb_senses:
            frontier, seen = {sense}, {sense}
            for level in range(PART_OF_LEVELS + 1):
                for node in frontier:
                    by_level.setdefault(node, [set() for _ in range(PART_OF_LEVELS + 1)])[
                        level
                    ].add(sense)
                frontier = {
                    h for n in frontier for h in n.hypernyms() + n.instance_hypernyms()
                } - seen
                seen |= frontier
        below = {}
        for holonym, levels in by_level.items():
            reached: set = set()
            for senses in levels:
                if len(reached | senses) > MAX_PART_OF_NOUNS:
                    break
                reached |= senses
            below[holonym] = reached
        return below

    def _gloss_vocabulary(self) -> dict[str, str]:
        """Gloss word -> relation (`rel` for nouns, `prop` for adjectives), common words only."""
        counts: Counter = Counter()
        for sense in self.kb_senses:
            counts.update(set(self._gloss_lemmas(sense)))
        vocab = {}
        for word, n in counts.items():
            if n >= MIN_GLOSS_SENSES and self.zipf(word) >= MIN_GLOSS_ZIPF:
                if word not in self._relations:
                    self._relations[word] = self._gloss_relation(word)
                relation = self._relations[word]
                if relation:
                    vocab[word] = relation
        return vocab

    def _gloss_lemmas(self, synset) -> list[str]:
        out = []
        for token in re.findall(r"[a-z][a-z-]+", synset.definition().lower()):
            if token in GLOSS_STOP:
                continue
            lemma = self.wn.morphy(token, "n") or self.wn.morphy(token, "a") or token
            if lemma not in GLOSS_STOP:
                out.append(lemma)
        return out

    def _gloss_relation(self, word: str) -> str | None:
        """`prop` if the word is mostly an adjective, `rel` if a noun, None for other words."""

        def tags(pos: str) -> int:
            return sum(
                lem.count()
                for s in self.wn.synsets(word, pos)
                for lem in s.lemmas()
                if lem.name() == word
            )

        nouns = [s for s in self.wn.synsets(word, "n") if word in s.lemma_names()]
        adjectives = self.wn.synsets(word, "a") + self.wn.synsets(word, "s")
        verbs = [s for s in self.wn.synsets(word, "v") if word in s.lemma_names()]
        noun_tags, adj_tags, verb_tags = tags("n"), tags("a") + tags("s"), tags("v")
        if verbs and verb_tags > max(noun_tags, adj_tags):
            return None
        if adjectives and (not nouns or adj_tags > noun_tags):
            return "prop"
        return "rel" if nouns else None

    # -- features ------------------------------------------------------------------
    def features(self, synset) -> set[str]:
        """Every `relation:concept` key that holds for this noun synset."""
        up = self.up(synset)
        return (
            {f"isa:{c}" for h in up for c in self.concepts(h)}
            | self._has_and_made(up)
            | self._part_of(synset)
            | self._related(synset, up)
        )

    def _has_and_made(self, up: frozenset) -> set[str]:
        keys = set()
        for h in up:
            if self._depth(h) < MIN_HOLONYM_DEPTH:
                continue  # every "whole" has parts and sections: not worth a question
            for meronym in self.meronyms(h):
                keys.update(f"has:{c}" for m in self._close_up(meronym) for c in self.evoked(m))
            for substance in h.substance_meronyms():
                keys.update(f"made:{c}" for m in self._close_up(substance) for c in self.evoked(m))
        return keys

    def _part_of(self, synset) -> set[str]:
        keys = set()
        for part in self._close_up(synset):
            for holonym in self.holonyms(part):
                if self._depth(holonym) < MIN_HOLONYM_DEPTH:
                    continue
                keys.update(f"part:{c}" for c in self.evoked(holonym))
                keys.update(
                    f"part:{c}" for x in self._below.get(holonym, ()) for c in self.evoked(x)
                )
        return keys

    def _related(self, synset, up: frozenset) -> set[str]:
        keys = set(self._made_of_gloss(synset))
        lexfile = LEXFILE_CONCEPTS.get(synset.lexname())
        if lexfile:
            keys.add(f"rel:{lexfile}")
        for h in up:  # "Is it related to medicine?" for a surgeon (topic of a hypernym)
            for domain in h.topic_domains() + h.usage_domains():
                keys.update(f"rel:{c}" for c in self.concepts(domain))
        for lemma in synset.lemmas():  # gardener -> garden, teacher -> teaching
            for related in lemma.derivationally_related_forms():
                if related.synset().pos() == "n":
                    keys.add(f"rel:{normalise_key(related.name())}")
        for word in set(self._gloss_lemmas(synset)):
            relation = self._gloss_words.get(word)
            if relation:
                keys.add(f"{relation}:{word}")
        return keys

    def _made_of_gloss(self, synset) -> set[str]:
        keys = set()
        for match in MADE_OF.finditer(synset.definition().lower()):
            for token in match.group(1).split():
                lemma = self.wn.morphy(token, "n")
                if lemma and lemma not in GLOSS_STOP and self.wn.synsets(lemma, "n"):
                    keys.add(f"made:{normalise_key(lemma)}")
        return keys
