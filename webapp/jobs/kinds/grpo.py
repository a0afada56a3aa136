"""The GRPO job on the web side: the shared training adapter (webapp.jobs.kinds.training) resolves
the base model spec (merging its adapter once), registers every checkpoint as a ModelSpec, and
returns the final one; this module adds GRPO's references (judge, secrets) and its runner."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from training.grpo.config import GRPOConfig
from webapp.catalog.models import ModelSpec
from webapp.jobs.kinds.checks import check_model, check_word_list
from webapp.jobs.kinds.training import _run, check_base, words_of


def check(config: GRPOConfig) -> None:
    """Refuse references that do not exist, before anything is queued."""
    errors: dict = {}
    check_base(config, errors)
    check_model(errors, "judge", config.judge, "judge")
    check_word_list(errors, "word_list", config.word_list, config.split)
    if config.val_word_list:
        check_word_list(
            errors, "val_word_list", config.val_word_list, config.val_split, "val_split"
        )
    if config.pool_word_list:
        check_word_list(errors, "pool_word_list", config.pool_word_list)
    if errors:
        raise ValidationError(errors)


def run(config: GRPOConfig, reporter) -> dict:
    from training.grpo.trainer import run as grpo_run
    from webapp.catalog.builders import judge_for

    judge = judge_for(ModelSpec.objects.get(name=config.judge))
    val_words = words_of(config.val_word_list, config.val_split) if config.val_word_list else None
    pool = words_of(config.pool_word_list) if config.pool_word_list else None
    return _run(
        "grpo",
        grpo_run,
        config,
        reporter,
        judge=judge,
        words=words_of(config.word_list, config.split),
        val_words=val_words,
        pool=pool,
    )
