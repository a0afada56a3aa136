"""The GRPO job on the web side: the shared training adapter (webapp.jobs.kinds.training) resolves
the base model spec (merging its adapter once), registers every checkpoint as a ModelSpec, and
returns the final one; this module adds GRPO's references (judge, secrets), the job's `processes`
(webapp.jobs.processes) and its runner."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError

from training.common.config import check_between
from training.common.held_out import held_out_overlap
from training.grpo.config import GRPOConfig
from webapp.catalog.models import ModelSpec
from webapp.jobs.kinds.checks import check_model, check_word_list, processes_knob
from webapp.jobs.kinds.training import _run, check_base, words_of
from webapp.jobs.processes import check_processes


@dataclass(frozen=True)
class GRPOJobConfig(GRPOConfig):
    """GRPOConfig plus how many processes the job runs in (data parallel by groups); server
    rollouts without a `rollout_server` get the deployment's (GENERATION_SERVER_URL)."""

    processes: int = processes_knob()

    def __post_init__(self) -> None:
        if self.rollout_backend == "server" and not self.rollout_server:
            # the deployment's generation server (GENERATION_SERVER_URL), stored with the job
            object.__setattr__(self, "rollout_server", settings.GENERATION_SERVER_URL)
        super().__post_init__()
        check_between(self, "processes")


def check(config: GRPOConfig) -> None:
    """Refuse references that do not exist, before anything is queued."""
    errors: dict = {}
    check_base(config, errors)
    check_model(errors, "judge", config.judge, "judge")
    check_word_list(errors, "word_list", config.word_list, config.split)
    validating = bool(config.val_secrets and config.val_word_list)
    if validating:
        check_word_list(
            errors, "val_word_list", config.val_word_list, config.val_split, "val_split"
        )
    lists_found = not {"word_list", "split", "val_word_list", "val_split"} & set(errors)
    if validating and not config.allow_val_overlap and lists_found:
        # the config's own check reads shipped lists; here the stored ones, splits included
        overlap = held_out_overlap(
            words_of(config.word_list, config.split),
            words_of(config.val_word_list, config.val_split),
            "word_list",
            "val_word_list",
        )
        if overlap:
            errors["val_word_list"] = [f"{overlap} (set allow_val_overlap to allow it)"]
    if config.pool_word_list:
        check_word_list(errors, "pool_word_list", config.pool_word_list)
    check_processes(config, errors)
    if errors:
        raise ValidationError(errors)


def run(config: GRPOConfig, reporter) -> dict:
    from training.grpo.trainer import run as grpo_run
    from webapp.catalog.builders import judge_for

    judge = judge_for(ModelSpec.objects.get(name=config.judge))
    validating = bool(config.val_secrets and config.val_word_list)
    val_words = words_of(config.val_word_list, config.val_split) if validating else None
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
