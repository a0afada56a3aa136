"""Where WordNet's taxonomy cannot vouch for a No: the knowledge-base judge answers `unknown` there.

- Open categories: categories people file things under by role or use ("pet", "tool", "snack")
  that WordNet files few things under; measured from the reference judge's answers about training
  secrets by training.judge.open_categories (data/open_categories.json).
- Misfiled senses: a sense that WordNet's lexicographers filed among the plants, animals or
  people but whose hypernyms never reach plant, animal or person (the tree sense of "redwood",
  sequoia.n.01, sits under cypress wood). For such a secret no category of that file gets a No.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from games.kb.knowledge import KnowledgeBase

OPEN_CATEGORIES_PATH = Path(__file__).resolve().parent / "data" / "open_categories.json"
# lexicographer files whose every noun should be a kind of one root category
LEXNAME_ROOTS = {"noun.plant": "plant", "noun.animal": "animal", "noun.person": "person"}


@lru_cache(maxsize=1)
def open_categories() -> frozenset[str]:
    """The open `isa` concepts (empty when the file is missing: every category then vouches)."""
    try:
        payload = json.loads(OPEN_CATEGORIES_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    return frozenset(payload.get("categories", {}))


class TaxonomyGaps:
    """Answers "can the KB vouch that `noun` is not a kind of `concept`?" beyond open categories."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self._concept_files: dict[str, set[str]] = {}
        for name, lexname in zip(kb.synset_names, kb.synset_lexnames):
            concept = name.rsplit(".", 2)[0].replace("_", " ").lower()
            self._concept_files.setdefault(concept, set()).add(lexname)
        for lexname, root in LEXNAME_ROOTS.items():
            self._concept_files.setdefault(root, set()).add(lexname)
        self._misfiled: dict[int, frozenset[str]] = {}

    def misfiled_files(self, noun: int) -> frozenset[str]:
        """The lexicographer files (of LEXNAME_ROOTS) holding a sense of `noun` whose hypernyms
        miss the file's root."""
        found = self._misfiled.get(noun)
        if found is None:
            out = set()
            for synset in self.kb.senses(noun, "any"):
                lexname = self.kb.synset_lexnames[synset]
                root = self.kb.concept("isa", LEXNAME_ROOTS.get(lexname, ""))
                if root is not None and root not in self.kb._synset_features[synset]:
                    out.add(lexname)
            found = self._misfiled[noun] = frozenset(out)
        return found

    def vouches_no(self, noun: int, concept: str) -> bool:
        """Whether an absent `isa:concept` fact of `noun` is a No the KB can vouch for."""
        if concept in open_categories():
            return False
        misfiled = self.misfiled_files(noun)
        return not (misfiled and misfiled & self._concept_files.get(concept, set()))
