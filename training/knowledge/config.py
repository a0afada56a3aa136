"""The knowledge stage's config: teach a model every pool word and its knowledge-base facts."""

from __future__ import annotations

from dataclasses import dataclass

from games.kb.knowledge import DEFAULT_SENSE, SENSE_MODES
from training.common.config import (
    TrainConfig,
    check_between,
    check_choice,
    check_limit_words,
    check_named,
    knob,
    limit_words_knob,
    new_defaults,
    word_list_knob,
)


@dataclass(frozen=True)
@new_defaults(
    epochs=3.0, learning_rate=1e-3, global_batch_size=64, per_device_batch_size=16, max_tokens=256
)
class KnowledgeJobConfig(TrainConfig):
    """Plain causal-LM training (every token) on sentences pairing each pool word with its facts.
    Defaults suit a tiny model trained from scratch (a higher learning rate than SFT)."""

    word_list: str = word_list_knob("dbrl/solved", "every candidate word, held-out ones included")
    sense: str = knob(
        DEFAULT_SENSE, "which senses of a word count (as for the KB judge)", choices=SENSE_MODES
    )
    sequences_per_word: int = knob(
        4,
        (
            "sequences per word, alternating statements "
            '("A poodle is a kind of dog.") and answered questions ending in the word '
            '("Is it a kind of dog? Yes. ... Is it a poodle? Yes.")'
        ),
        min=1,
        max=64,
    )
    facts_per_sequence: int = knob(
        8,
        "facts per sequence: the most specific half always, the rest drawn at random",
        min=1,
        max=64,
    )
    negatives_per_sequence: int = knob(
        2, "question sequences: facts of other words answered No", min=0, max=32
    )
    gloss: bool = knob(True, "statement sequences end with the word's WordNet gloss")
    limit_words: int = limit_words_knob()

    def __post_init__(self) -> None:
        super().__post_init__()
        check_named(self, "word_list", "the pool of words")
        check_choice(self, "sense", SENSE_MODES)
        check_between(self, "sequences_per_word")
        check_between(self, "facts_per_sequence")
        check_between(self, "negatives_per_sequence")
        check_limit_words(self)
