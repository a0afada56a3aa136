"""The derived word lists: the teacher's default pool holds no held-out word (issue 48)."""

from __future__ import annotations

from games.wordlists import read_words
from training.common.config import GameDataConfig
from training.dpo.config import DPOJobConfig
from training.evaluation.config import EvaluationConfig
from training.sft.config import SFTJobConfig

HELD_OUT = ("dbrl/paper_test", "dbrl/paper_val", "dbrl/test", "dbrl/val")


def test_solved_train_is_solved_without_any_held_out_word():
    held = set().union(*(read_words(name) for name in HELD_OUT))
    pool = read_words("dbrl/solved_train")
    assert not held & set(pool)
    assert pool == [w for w in read_words("dbrl/solved") if w not in held]  # in solved's order
    assert set(pool) == set(read_words("dbrl/train_sft")) | set(read_words("dbrl/train_rl"))


def test_the_teacher_pool_defaults_to_it_and_evaluation_samples_as_the_paper():
    for config in (GameDataConfig(), SFTJobConfig(), DPOJobConfig()):
        assert config.pool_word_list == "dbrl/solved_train"
    assert EvaluationConfig().sampling == "paper"
