"""Knowledge sequences: each pool word with its knowledge-base facts, in the question language.

Two forms alternate per word:
- statements: "A poodle is a kind of dog. A poodle has a tail. ... Poodle: an intelligent dog ..."
- answered questions ending in the word, the way a game ends: "Is it a kind of dog? Yes. Is it
  made of wood? No. ... Is it a poodle? Yes."
Facts are `relation:concept` features of the word's senses (games.kb), phrased exactly as the KB
judge grounds them (games.kb.questions.phrase). Every sequence keeps the word's most specific
facts (those true of the fewest nouns) and draws the rest at random; questions also get a few
facts of other pool words answered No.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from games import rules
from games.kb import KnowledgeBase
from games.kb.questions import FUNCTION_WORDS, article, phrase

GENERIC_SHARE = (
    0.2  # facts true of more than this share of all nouns teach nothing ("a kind of entity")
)

STATEMENTS = {
    "isa": "{A} is a kind of {c}.",
    "has": "{A} has {a} {c}.",
    "part": "{A} is part of {a} {c}.",
    "made": "{A} is made of {c}.",
    "rel": "{A} is related to {c}.",
    "prop": "{A} is {c}.",
}


def word_facts(kb: KnowledgeBase, word: str, sense: str, coverage: np.ndarray) -> list[int]:
    """Feature ids that hold for the word, most specific first, without facts that name the word
    ("a kind of poodle dog": asking it would win a game), function words and facts most nouns
    have."""
    noun = kb.lookup(word)
    if noun is None:
        return []
    own = rules.secret_variants(word)
    limit = GENERIC_SHARE * len(kb.nouns)
    keep = []
    for f in kb.feature_set(noun, sense):
        concept = kb.features[f].split(":", 1)[1]
        if (
            rules.names_secret(concept, word, own)
            or len(concept) <= 2
            or concept.split(" ")[0] in FUNCTION_WORDS
            or coverage[f] > limit
        ):
            continue
        keep.append(f)
    return sorted(keep, key=lambda f: (int(coverage[f]), f))


def _pick(facts: list[int], n: int, rng: random.Random) -> list[int]:
    core = facts[: (n + 1) // 2]
    rest = facts[len(core) :]
    return core + rng.sample(rest, min(n - len(core), len(rest)))


def statement_text(kb: KnowledgeBase, word: str, facts: Sequence[int], gloss: str = "") -> str:
    subject = f"{article(word).capitalize()} {word}"
    lines = []
    for f in facts:
        relation, concept = kb.features[f].split(":", 1)
        lines.append(STATEMENTS[relation].format(A=subject, a=article(concept), c=concept))
    if gloss:
        lines.append(f"{word.capitalize()}: {gloss}.")
    return " ".join(lines)


def question_text(
    kb: KnowledgeBase, word: str, facts: Sequence[int], negatives: Sequence[int], rng: random.Random
) -> str:
    asked = [(f, "Yes.") for f in facts] + [(f, "No.") for f in negatives]
    rng.shuffle(asked)
    parts = [f"{phrase(*kb.features[f].split(':', 1))} {answer}" for f, answer in asked]
    parts.append(f"{phrase('isa', word, guess=True)} Yes.")
    return " ".join(parts)


def knowledge_texts(
    kb: KnowledgeBase,
    words: Sequence[str],
    *,
    sense: str,
    sequences_per_word: int = 4,
    facts_per_sequence: int = 8,
    negatives_per_sequence: int = 2,
    gloss: bool = True,
    seed: int = 0,
) -> tuple[list[dict], list[str]]:
    """({"text", "word", "form"} rows, words without knowledge-base facts)."""
    coverage = kb.coverage(sense)
    facts_of = {w: word_facts(kb, w, sense, coverage) for w in dict.fromkeys(words)}
    known = [w for w, facts in facts_of.items() if facts]
    missing = [w for w, facts in facts_of.items() if not facts]
    rows = []
    for word in known:
        facts, mine = facts_of[word], set(facts_of[word])
        glosses = kb.definitions(word, sense) if gloss else []
        for k in range(sequences_per_word):
            rng = random.Random(f"{seed}:{word}:{k}")
            chosen = _pick(facts, facts_per_sequence, rng)
            if k % 2 == 0:
                text = statement_text(
                    kb, word, chosen, glosses[(k // 2) % len(glosses)] if glosses else ""
                )
                form = "statements"
            else:
                negatives = []
                for _ in range(4 * negatives_per_sequence):
                    if len(negatives) >= negatives_per_sequence or len(known) < 2:
                        break
                    other = facts_of[known[rng.randrange(len(known))]]
                    f = other[
                        rng.randrange(min(len(other), facts_per_sequence))
                    ]  # a specific fact of another word
                    if f not in mine and f not in negatives:
                        negatives.append(f)
                text, form = question_text(kb, word, chosen, negatives, rng), "questions"
            rows.append({"text": text, "word": word, "form": form})
    return rows, missing
