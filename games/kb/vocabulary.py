"""Which nouns the knowledge base knows, and their WordNet senses (build time only).

The nouns are the words of every shipped list (games/data/wordlists) and the WordNet nouns
among wordfreq's 30,000 most frequent English words. A word resolves to WordNet senses by,
in order (the first that works):

1. `wordnet`  — the word is a WordNet noun lemma ("soccer ball" -> soccer_ball).
2. `morphy`   — WordNet's own lemmatiser finds a common-noun lemma ("geese" -> goose; also
                "banks" -> bank, though "Banks" is a lemma: the naturalist's name).
3. `spelling` — a hyphen/space/joined spelling of it is a lemma ("muskox" -> musk_ox).
4. `plural`   — only its plural is a lemma (pluralia tantum: "scissor" -> scissors).
5. `head`     — a compound whose head noun resolves ("golf ball" -> ball, "smartphone" -> phone):
                the new noun gets the head's senses (and is a kind of the head).
1-4 make the word an alias of an existing lemma; 5 makes a noun of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from games.kb.knowledge import normalise_key

MIN_PART_CHARS = 3  # "smartphone" -> smart + phone; never a one- or two-letter part
MIN_PART_ZIPF = 3.0  # both parts of a joined compound must be common words


@dataclass
class Noun:
    key: str  # normalised surface form ("soccer ball")
    senses: list = field(default_factory=list)  # nltk synsets, most frequent first
    counts: list[int] = field(default_factory=list)  # tag count of the word in each sense
    via: str = "wordnet"  # how it resolved (see the module docstring)


class Resolver:
    def __init__(self, wn, zipf):
        self.wn = wn
        self.zipf = zipf

    def lemma_senses(self, lemma: str) -> tuple[list, list[int]]:
        """Senses (and tag counts) of an exact noun lemma ("soccer_ball"), in WordNet order."""
        senses, counts = [], []
        for synset in self.wn.synsets(lemma, "n"):
            matching = [lem for lem in synset.lemmas() if lem.name().lower() == lemma]
            if matching:
                senses.append(synset)
                counts.append(max(lem.count() for lem in matching))
        return senses, counts

    def resolve(self, word: str) -> Noun | None:
        key = normalise_key(word)
        if not key:
            return None
        lemma = key.replace(" ", "_")
        senses, counts = self.lemma_senses(lemma)
        bases = [b for b in self.wn._morphy(lemma, "n") if b != lemma]
        common = [b for b in bases if self._is_common_noun(b)]
        if senses and (self._is_common_noun(lemma) or not common):
            return Noun(key, senses, counts, "wordnet")
        if common or bases:  # "geese" -> goose; "banks" -> bank, not only Sir Joseph Banks
            return self._alias((common or bases)[0], "morphy")
        for variant in self._spellings(key):
            if self.lemma_senses(variant)[0]:
                return self._alias(variant, "spelling")
        for plural in (lemma + "s", lemma + "es"):
            if self.lemma_senses(plural)[0] and self._is_common_noun(plural):
                return self._alias(plural, "plural")
        if any(self.wn.synsets(lemma, pos) for pos in "vasr"):
            return None  # an adjective, verb or adverb ("teenage"), not an unknown compound
        head = self._head(key)
        if head is not None:
            return Noun(key, head.senses, head.counts, f"head:{head.key}")
        return None

    def _is_common_noun(self, lemma: str) -> bool:
        """Not only a proper name ("williams" is Tennessee Williams)."""
        return any(lem.name() == lemma for s in self.wn.synsets(lemma, "n") for lem in s.lemmas())

    def _alias(self, lemma: str, via: str) -> Noun:
        senses, counts = self.lemma_senses(lemma)
        return Noun(normalise_key(lemma), senses, counts, via)

    @staticmethod
    def _spellings(key: str) -> list[str]:
        if " " in key or "-" in key:
            parts = key.replace("-", " ").split()
            return ["_".join(parts), "-".join(parts), "".join(parts)]
        cuts = range(2, len(key) - 1)
        return [f"{key[:i]}{sep}{key[i:]}" for i in cuts for sep in ("_", "-")]

    def _head(self, key: str) -> Noun | None:
        """The resolved head noun of a compound: its last word, or the longest noun suffix."""
        parts = key.split()
        if len(parts) > 1:
            head = self.resolve(parts[-1])
            return head if head and not head.via.startswith("head") else None
        for i in range(MIN_PART_CHARS, len(key) - MIN_PART_CHARS + 1):
            modifier, rest = key[:i], key[i:]
            if min(self.zipf(modifier), self.zipf(rest)) < MIN_PART_ZIPF:
                continue
            senses, counts = self.lemma_senses(rest)
            if senses and self._is_common_noun(rest):
                return Noun(rest, senses, counts, "wordnet")
        return None
