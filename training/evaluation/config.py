from __future__ import annotations

from dataclasses import dataclass

from games.types import WIN_RULES
from training.common.config import (
    SPLITS,
    check_between,
    check_choice,
    check_named,
    check_split,
    knob,
)


@dataclass(frozen=True)
class EvaluationConfig:
    guesser: str = knob("infogain", "name of the guesser model spec")
    judge: str = knob("kb", "name of the judge model spec")
    word_list: str = knob("dbrl/paper_test", "word list name (newest version)")
    split: str = knob(
        "",
        "only words of this split (sft, rl, val, test); empty = all",
        choices=SPLITS,
        blank="(all)",
    )
    samples: int = knob(8, "k: games per word (mean@k, pass@k)", min=1, max=256)
    max_turns: int = knob(20, "questions per game", min=1, max=200)
    win_rule: str = knob(
        "reference",
        (
            "which questions win: reference (the paper's: the secret named anywhere, "
            "by lemma or stem) or strict (a guess of the thing itself); "
            "success under both rules is reported either way"
        ),
        choices=WIN_RULES,
    )
    seed: int = knob(0, "seed of the whole evaluation")
    batch_size: int = knob(64, "games played in lock-step", min=1, max=4096)
    pool_word_list: str = knob(
        "", ("candidate pool for infogain/random guessers; empty = the knowledge base's nouns")
    )
    limit: int = knob(0, "only the first N words (0 = all)", min=0)

    def __post_init__(self) -> None:
        check_named(self, "guesser", "a guesser model spec")
        check_named(self, "judge", "a judge model spec")
        check_named(self, "word_list", "a word list")
        check_split(self)
        check_between(self, "samples")
        check_between(self, "max_turns")
        check_choice(self, "win_rule")
        check_between(self, "batch_size")
        check_between(self, "limit", message="limit must be 0 (all words) or positive")
