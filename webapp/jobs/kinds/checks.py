"""Reference checks the job kinds share: each records a refusal under the config field it concerns,
so a kind's `check` collects every problem before raising one ValidationError."""

from __future__ import annotations

from training.common.config import knob
from webapp.catalog.models import ModelSpec
from webapp.catalog.selectors import ModelSpecUnavailable, model_spec_active, word_list_latest

Errors = dict[str, list[str]]


def check_model(
    errors: Errors, field: str, name: str, role: str = "", **lookup
) -> ModelSpec | None:
    """The active model spec `name` (see catalog.selectors.model_spec_active), or None with the
    refusal recorded under `field`."""
    try:
        return model_spec_active(name, role, **lookup)
    except ModelSpecUnavailable as err:
        errors.setdefault(field, []).append(err.message)
        return None


def check_word_list(
    errors: Errors, field: str, name: str, split: str = "", split_field: str = "split"
) -> None:
    """The word list `name` exists and, with `split`, has words in that split."""
    word_list = word_list_latest(name)
    if word_list is None:
        errors[field] = [f"no word list named {name!r}"]
    elif split and not word_list.entries.filter(split=split).exists():
        errors[split_field] = [f"{name} has no words in the {split!r} split"]


def processes_knob():
    """The `processes` field of the training kinds that run under torchrun (webapp.jobs.processes);
    its bound here is the field's, the deployment's (JOBS_MAX_PROCESSES) is checked before
    queueing."""
    return knob(
        1,
        "processes the job runs in (GPUs on a GPU worker, CPU processes on a CPU worker); more "
        "than 1 starts the run under torchrun, data parallel",
        min=1,
        max=64,
    )
