import random

import pytest

from training.curation.config import CurationConfig
from training.curation.splits import RL_BAND, assign_splits, split_sizes, training_subsets

WORDS = [f"word{i:04d}" for i in range(1000)]


def by_split(assignment):
    out = {}
    for word, split in assignment.items():
        out.setdefault(split, set()).add(word)
    return out


def test_splits_are_disjoint_cover_every_word_and_honour_fractions():
    config = CurationConfig(val=0.05, test=0.1, sft=0.075, rl=0.7)  # 7.5% left over
    assignment = assign_splits(WORDS, config)
    groups = by_split(assignment)
    assert set(assignment) == set(WORDS)  # each word has exactly one split (a dict key)
    assert {k: len(v) for k, v in groups.items()} == {
        "val": 50,
        "test": 100,
        "sft": 75,
        "rl": 700,
        "": 75,
    }


def test_splits_are_reproducible_from_the_seed_and_independent_of_input_order():
    config = CurationConfig(seed=7)
    shuffled = WORDS[:]
    random.Random(1).shuffle(shuffled)
    assert assign_splits(WORDS, config) == assign_splits(shuffled, config)
    other = assign_splits(WORDS, CurationConfig(seed=8))
    assert other != assign_splits(WORDS, config)
    assert {k: len(v) for k, v in by_split(other).items()} == {
        k: len(v) for k, v in by_split(assign_splits(WORDS, config)).items()
    }


def test_adding_a_word_moves_few_others():
    config = CurationConfig(seed=3)
    before = assign_splits(WORDS, config)
    after = assign_splits(WORDS + ["newcomer"], config)
    moved = [w for w in WORDS if before[w] != after[w]]
    assert len(moved) <= 4  # only words at split boundaries shift


def test_paper_counts_and_counts_larger_than_the_pool():
    paper = CurationConfig(split_by="count", val=238, test=487, sft=341, rl=3612)
    words = [f"w{i}" for i in range(4678)]
    groups = by_split(assign_splits(words, paper))
    assert {k: len(v) for k, v in groups.items()} == {
        "val": 238,
        "test": 487,
        "sft": 341,
        "rl": 3612,
    }
    with pytest.raises(ValueError, match="need 4678 words .* only 4677"):
        split_sizes(4677, paper)


def test_fraction_rounding_gives_the_leftover_to_the_largest_remainders():
    config = CurationConfig(val=1 / 3, test=1 / 3, sft=1 / 3, rl=0.0)
    assert split_sizes(10, config) == {"val": 4, "test": 3, "sft": 3, "rl": 0}
    assert sum(split_sizes(7, CurationConfig()).values()) == 7


def test_rl_band_and_curriculum_subsets_match_their_definitions():
    config = CurationConfig(
        rl_band_low=0.25,
        rl_band_high=0.75,
        rl_band_size=30,
        curriculum=(0.05, 0.5, 0.66),
        val=0.1,
        test=0.1,
        sft=0.1,
        rl=0.7,
    )
    rng = random.Random(0)
    rates = {w: rng.choice([0.0, 0.125, 0.25, 0.5, 0.625, 0.75, 0.875, 1.0]) for w in WORDS}
    splits = assign_splits(WORDS, config)
    subsets = training_subsets(splits, rates, config)
    rl = {w for w, s in splits.items() if s == "rl"}
    band = {w for w, s in subsets.items() if RL_BAND in s}
    eligible = {w for w in rl if 0.25 <= rates[w] <= 0.75}
    assert len(band) == 30 and band <= eligible
    assert subsets == training_subsets(splits, rates, config)  # seeded: the same band every time
    for name, threshold in (
        ("curriculum_5", 0.05),
        ("curriculum_50", 0.5),
        ("curriculum_66", 0.66),
    ):
        members = {w for w, s in subsets.items() if name in s}
        assert members == {w for w in rl if rates[w] >= threshold}
    assert {w for w, s in subsets.items() if "curriculum_66" in s} < {
        w for w, s in subsets.items() if "curriculum_50" in s
    }
    assert not any(
        subsets[w] for w in WORDS if w not in rl
    )  # subsets are drawn from the RL split only
    everything = training_subsets(
        splits,
        rates,
        CurationConfig(
            rl_band_low=0.25,
            rl_band_high=0.75,
            rl_band_size=10**6,
            val=0.1,
            test=0.1,
            sft=0.1,
            rl=0.7,
        ),
    )
    assert {w for w, s in everything.items() if RL_BAND in s} == eligible
