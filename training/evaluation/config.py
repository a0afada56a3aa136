from __future__ import annotations

from dataclasses import dataclass

from training.common.config import (
    check_between,
    check_choice,
    check_named,
    check_precision,
    check_split,
    guesser_knob,
    judge_knob,
    knob,
    limit_words_knob,
    lockstep_batch_knob,
    max_turns_knob,
    precision_knob,
    split_knob,
    win_rule_knob,
)

EVAL_SAMPLINGS = ("model", "paper")


@dataclass(frozen=True)
class EvaluationConfig:
    guesser: str = guesser_knob("name of the guesser model spec")
    judge: str = judge_knob("name of the judge model spec")
    word_list: str = knob("dbrl/paper_test", "word list name (newest version)")
    split: str = split_knob("only words of this split (sft, rl, val, test); empty = all")
    samples: int = knob(8, "k: games per word (mean@k, pass@k)", min=1, max=256, paper=8)
    max_turns: int = max_turns_knob(paper=20)
    win_rule: str = win_rule_knob(
        "which questions win: reference (the paper's scripts: the secret as a word "
        "anywhere in the question), strict (a guess of the thing itself) or lemma "
        "(reference plus lemma/stem matches); success under reference and strict "
        "is reported either way"
    )
    seed: int = knob(0, "seed of the whole evaluation")
    batch_size: int = lockstep_batch_knob(64)
    pool_word_list: str = knob(
        "", ("candidate pool for infogain/random guessers; empty = the knowledge base's nouns")
    )
    limit: int = limit_words_knob()
    precision: str = precision_knob()  # of the guesser's and judge's models, where they run one
    sampling: str = knob(
        "paper",
        (
            "a language-model guesser's decoding: paper (the reference's evaluation: T 0.7, "
            "top-p 0.8, top-k 20; the token budget stays the spec's) or model (its spec's "
            "sampling, e.g. a training base's T 1.0)"
        ),
        choices=EVAL_SAMPLINGS,
        paper="paper",
    )

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
        check_precision(self)
        check_choice(self, "sampling")
