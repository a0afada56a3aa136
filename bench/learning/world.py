"""The knowledge-base world: a seeded pool of nouns and its disjoint splits."""

from __future__ import annotations

import random

from bench.learning.scale import Scale

SPLITS = ("sft", "rl", "val", "test")


def make_world(scale: Scale) -> dict[str, list[str]]:
    """A seeded pool of KB nouns with facts whose guess question the KB grounds, split into SFT,
    RL, validation and test secrets (in that order of the shuffled pool)."""
    from games.kb import load_kb
    from games.kb.candidates import candidate_model
    from games.wordlists import read_words
    from training.knowledge.data import word_facts

    kb = load_kb()
    coverage = kb.coverage("dominant")
    words = [w for w in read_words("dbrl/solved") if kb.lookup(w) is not None]
    random.Random(scale.world_seed).shuffle(words)
    candidates = [w for w in words[: 2 * scale.pool] if word_facts(kb, w, "dominant", coverage)]
    model = candidate_model(kb, candidates)
    pool = [w for i, w in enumerate(model.words) if model.guess_question[i] >= 0][: scale.pool]
    if len(pool) < scale.pool:
        raise SystemExit(f"only {len(pool)} words for a pool of {scale.pool}")
    world, start = {"pool": pool}, 0
    for split in SPLITS:
        size = getattr(scale, split)
        world[split] = pool[start : start + size]
        start += size
    return world


def held_out(world: dict[str, list[str]]) -> set[str]:
    """Secrets no game-format row may be about: validation and test."""
    return set(world["val"]) | set(world["test"])
