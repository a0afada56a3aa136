"""The knowledge base: WordNet 3.0 nouns with relation features, shipped as one data file.

`load_kb()` reads games/kb/data/wordnet_kb.npz (no nltk, no download); `python -m
games.kb.build` regenerates it from WordNet 3.0 and wordfreq.
"""

from games.kb.knowledge import (
    DATA_PATH,
    DEFAULT_SENSE,
    RELATIONS,
    SENSE_MODES,
    KnowledgeBase,
    load_kb,
    normalise_key,
)

__all__ = [
    "DATA_PATH",
    "DEFAULT_SENSE",
    "RELATIONS",
    "SENSE_MODES",
    "KnowledgeBase",
    "load_kb",
    "normalise_key",
]
