import dataclasses

import pytest

from training.common.config import TrainConfig, new_defaults
from training.dpo.config import DPOJobConfig
from training.knowledge.config import KnowledgeJobConfig


def test_new_defaults_change_only_the_defaults_of_inherited_fields():
    base = {f.name: f for f in dataclasses.fields(TrainConfig)}
    for config, changed in [
        (
            DPOJobConfig(),
            {
                "epochs": 1.0,
                "learning_rate": 5e-6,
                "global_batch_size": 64,
                "per_device_batch_size": 4,
                "lora": True,
                "lora_rank": 8,
                "lora_alpha": 16,
            },
        ),
        (
            KnowledgeJobConfig(),
            {
                "epochs": 3.0,
                "learning_rate": 1e-3,
                "global_batch_size": 64,
                "per_device_batch_size": 16,
                "max_tokens": 256,
            },
        ),
    ]:
        fields = {f.name: f for f in dataclasses.fields(config)}
        assert list(fields)[: len(base)] == list(base)  # inherited fields keep their places
        for name, value in changed.items():
            assert getattr(config, name) == value and fields[name].metadata == base[name].metadata
        assert config.weight_decay == TrainConfig().weight_decay  # the others stay the base's


def test_new_defaults_refuses_a_field_the_base_does_not_have():
    with pytest.raises(TypeError, match="no inherited field 'epoch'"):

        @dataclasses.dataclass(frozen=True)
        @new_defaults(epoch=1.0)
        class Typo(TrainConfig):
            pass


def test_new_defaults_are_still_checked():
    with pytest.raises(ValueError, match="global_batch_size must be a multiple"):
        DPOJobConfig(per_device_batch_size=5)


def test_range_and_choice_checks_name_the_field_and_what_it_may_be():
    from training.common.config import check_between, check_choice
    from training.grpo.config import GRPOConfig

    config = GRPOConfig()
    check_between(config, "steps", 1, 100_000)
    with pytest.raises(ValueError, match=r"^steps must be between 1 and 10$"):
        check_between(dataclasses.replace(config, steps=11), "steps", 1, 10)
    with pytest.raises(ValueError, match=r"^advantage must be one of a, b$"):
        check_choice(config, "advantage", ("a", "b"))
    with pytest.raises(ValueError, match=r"^max_turns must be between 1 and 200$"):
        GRPOConfig(max_turns=0)


def test_a_blank_name_is_refused_at_its_field():
    from training.common.config import ConfigErrors, build_checked
    from training.evaluation.config import EvaluationConfig

    with pytest.raises(ValueError, match=r"^judge: name a judge model spec$"):
        EvaluationConfig(guesser="infogain", judge="  ", word_list="dbrl/paper_test")
    with pytest.raises(ConfigErrors) as caught:
        build_checked(EvaluationConfig, guesser="", judge="kb", word_list=" ")
    assert caught.value.fields == ["guesser", "word_list"]
    assert caught.value.messages == [
        "guesser: name a guesser model spec",
        "word_list: name a word list",
    ]


def test_build_checked_collects_every_failed_check_with_its_field_a_direct_build_the_first():
    from training.common.config import ConfigErrors, build_checked
    from training.grpo.config import GRPOConfig

    bad = {"steps": 0, "max_turns": 0, "warn_window": 1, "advantage": "nope"}
    with pytest.raises(ConfigErrors) as caught:
        build_checked(GRPOConfig, **bad)
    assert caught.value.fields == ["steps", "max_turns", "advantage", "warn_window"]
    assert caught.value.messages[0] == "steps must be between 1 and 100000"
    with pytest.raises(ValueError, match=r"^steps must be between 1 and 100000$") as first:
        GRPOConfig(**bad)
    assert not isinstance(first.value, ConfigErrors)
    assert build_checked(GRPOConfig, steps=3).steps == 3  # a valid config is built as usual


def test_bounds_live_in_the_field_metadata_that_check_between_reads():
    from training.common.config import check_between

    @dataclasses.dataclass(frozen=True)
    class Bounded:
        rate: float = dataclasses.field(
            default=0.5, metadata={"min": 0, "max": 1, "min_open": True}
        )
        count: int = dataclasses.field(default=1, metadata={"min": 1})

        def __post_init__(self):
            check_between(self, "rate")
            check_between(self, "count", message="count must be 1 or more")

    Bounded(rate=1.0, count=10**9)  # a closed upper bound; no upper bound at all
    with pytest.raises(ValueError, match=r"^rate must be between 0 and 1$"):
        Bounded(rate=0.0)  # an open lower bound
    with pytest.raises(ValueError, match=r"^count must be 1 or more$"):
        Bounded(count=0)


@pytest.mark.parametrize("modules", [" , ", ",", "all-linear, q_proj"])
def test_lora_target_modules_must_name_modules_or_be_all_linear_alone(modules):
    with pytest.raises(ValueError, match=r"^lora_target_modules: all-linear or module names"):
        TrainConfig(lora=True, lora_target_modules=modules)
    assert TrainConfig(lora_target_modules=" q_proj ,v_proj").target_modules == ["q_proj", "v_proj"]
    assert TrainConfig(lora_target_modules="all-linear").target_modules == "all-linear"


@pytest.mark.parametrize("config_class", [TrainConfig, DPOJobConfig, "grpo"])
def test_every_trainer_refuses_the_same_adamw_settings_with_the_same_messages(config_class):
    from training.common.config import ConfigErrors, build_checked
    from training.grpo.config import GRPOConfig

    config_class = GRPOConfig if config_class == "grpo" else config_class
    bad = {"learning_rate": 1.5, "weight_decay": -0.1, "adam_beta2": 1.0, "max_grad_norm": -1}
    with pytest.raises(ConfigErrors) as refused:
        build_checked(config_class, **bad)
    learning_rate = (  # GRPO's 0 stands for the paper's learning rate for the advantage
        "learning_rate must be 0 (the paper's for the advantage) or in (0, 1)"
        if config_class is GRPOConfig
        else "learning_rate must be in (0, 1)"
    )
    assert refused.value.messages == [
        learning_rate,
        "weight_decay must be in [0, 1)",
        "adam_beta1 and adam_beta2 must be in [0, 1)",
        "max_grad_norm must be >= 0",
    ]
    build_checked(config_class, learning_rate=1e-3, weight_decay=0.0, adam_beta2=0.95)
    if config_class is not GRPOConfig:  # only GRPO has a paper's learning rate to stand for
        with pytest.raises(ConfigErrors, match=r"^learning_rate must be in \(0, 1\)$"):
            build_checked(config_class, learning_rate=0.0)


def test_the_command_line_help_prints_a_literal_percent_sign():
    # argparse %-formats help text; an undoubled % printed the whole formatting dict (with
    # object addresses) into `--help` and the generated command-line reference
    from training.common.cli import config_parser
    from training.sft.config import SFTJobConfig

    text = config_parser(SFTJobConfig, "sft", "").format_help()
    assert "~20% slower" in text
    assert "0x" not in text
