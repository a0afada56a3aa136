from __future__ import annotations

from dataclasses import dataclass, field

from games.types import WIN_RULES
from training.common.config import check_between, check_choice

SPLITS = ("", "sft", "rl", "val", "test")


@dataclass(frozen=True)
class EvaluationConfig:
    guesser: str = field(default="infogain", metadata={"help": "name of the guesser model spec"})
    judge: str = field(default="kb", metadata={"help": "name of the judge model spec"})
    word_list: str = field(
        default="dbrl/paper_test", metadata={"help": "word list name (newest version)"}
    )
    split: str = field(
        default="", metadata={"help": "only words of this split (sft, rl, val, test); empty = all"}
    )
    samples: int = field(default=8, metadata={"help": "k: games per word (mean@k, pass@k)"})
    max_turns: int = field(default=20, metadata={"help": "questions per game"})
    win_rule: str = field(
        default="reference",
        metadata={
            "choices": WIN_RULES,
            "help": (
                "which questions win: reference (the paper's: the secret named anywhere, "
                "by lemma or stem) or strict (a guess of the thing itself); "
                "success under both rules is reported either way"
            ),
        },
    )
    seed: int = field(default=0, metadata={"help": "seed of the whole evaluation"})
    batch_size: int = field(default=64, metadata={"help": "games played in lock-step"})
    pool_word_list: str = field(
        default="",
        metadata={
            "help": "candidate pool for infogain/random guessers; "
            "empty = the knowledge base's nouns"
        },
    )
    limit: int = field(default=0, metadata={"help": "only the first N words (0 = all)"})

    def __post_init__(self) -> None:
        if not self.guesser.strip():
            raise ValueError("guesser: name a guesser model spec")
        if not self.judge.strip():
            raise ValueError("judge: name a judge model spec")
        if not self.word_list.strip():
            raise ValueError("word_list: name a word list")
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(repr(s) for s in SPLITS)}")
        check_between(self, "samples", 1, 256)
        check_between(self, "max_turns", 1, 200)
        check_choice(self, "win_rule", WIN_RULES)
        check_between(self, "batch_size", 1, 4096)
        if self.limit < 0:
            raise ValueError("limit must be 0 (all words) or positive")
