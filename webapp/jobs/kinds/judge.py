"""The `judge` job on the web side: train the learned judge (games.judges.learned) on the shipped
reference answers, the labelling app's gold answers and/or the yes/no verdicts a judge gave in
stored games, then register it as a judge model spec (`learned-job<ID>`) that can be played,
scored on the gold set and compared like any other.

Gold and games rows weigh `extra_weight` reference rows each in the loss. A (secret, question)
pair answered several times is one row with its yes and no counts (the trainer learns the share
of yes). It is a small network that trains on a CPU, so the job runs on the cpu queue.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import transaction

from training.judge import (
    data,
)  # through the module, so data.reference_rows can be replaced in tests
from training.judge.config import LearnedJudgeJobConfig
from training.judge.data import Row
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec
from webapp.catalog.services import learned_description
from webapp.jobs.kinds.checks import check_model
from webapp.jobs.models import Checkpoint
from webapp.labelling.selectors import gold_answers
from webapp.play.models import Turn

EXTRA_ROWS_FILE = (
    "extra_rows.jsonl"  # the gold and games rows a job trained on (a downloadable artifact)
)


# -- rows ------------------------------------------------------------------------------------------
def rows_of_answers(
    answers: Iterable[tuple[str, str, str]], *, weight: float, source: str
) -> list[Row]:
    """One row per (secret, question) from (secret, question, "yes" | "no") answers, with its
    counts."""
    counts: dict[tuple[str, str], list[int]] = {}
    for secret, question, answer in answers:
        counts.setdefault((secret, question), [0, 0])[answer != "yes"] += 1
    return [
        Row(secret, question, yes, no, weight, source)
        for (secret, question), (yes, no) in counts.items()
    ]


def gold_rows(weight: float) -> list[Row]:
    """The gold set's yes/no answers (adjudicated, else unanimous labels)."""
    return rows_of_answers(gold_answers(), weight=weight, source="gold")


def judged_turns(judge_name: str):
    """Stored turns the judge named `judge_name` answered yes or no (the rules' decisions left
    out)."""
    return (
        Turn.objects.filter(game__judge__name=judge_name, verdict__in=("yes", "no"))
        .exclude(game__secret="")
        .exclude(judge_raw__startswith="rule:")
    )


def games_rows(judge_name: str, weight: float) -> list[Row]:
    answers = (
        judged_turns(judge_name).order_by("id").values_list("game__secret", "question", "verdict")
    )
    return rows_of_answers(answers.iterator(), weight=weight, source="games")


def training_rows(config: LearnedJudgeJobConfig) -> list[Row]:
    """Every row the config's dataset names: reference, gold, games or a file."""
    parts = config.dataset.split("+")
    rows: list[Row] = []
    if "reference" in parts:
        rows += data.reference_rows()
    if "file" in parts:
        rows += data.read_rows(config.data_path)
    if "gold" in parts:
        rows += gold_rows(config.extra_weight)
    if "games" in parts:
        rows += games_rows(config.games_judge, config.extra_weight)
    return rows


# -- before queueing -------------------------------------------------------------------------------
def _is_file(path: str) -> bool:
    try:
        return Path(path).is_file()
    except (OSError, ValueError):  # a name too long, a NUL byte, ...
        return False


def check(config: LearnedJudgeJobConfig) -> None:
    """Refuse a dataset whose rows do not exist, before anything is queued."""
    errors: dict[str, list[str]] = {}
    parts = config.dataset.split("+")
    if "gold" in parts and not gold_answers():
        errors["dataset"] = [
            "the gold set has no yes/no answers yet (adjudicate or fully label some items first)"
        ]
    if "games" in parts:
        spec = check_model(errors, "games_judge", config.games_judge, "judge")
        if spec is not None and not judged_turns(spec.name).exists():
            errors["games_judge"] = [f"no stored game has a yes or no answer by {spec.name!r}"]
    if "file" in parts and not _is_file(config.data_path):
        errors["data_path"] = [f"no file at {config.data_path!r}"]
    if errors:
        raise ValidationError(errors)


# -- the result becomes a judge --------------------------------------------------------------------
@transaction.atomic
def model_spec_register_learned(
    *, job_id: int, result: dict, config: LearnedJudgeJobConfig, sources: dict[str, int]
) -> ModelSpec:
    """The judge model spec of a finished job's weights (one per job: a re-run updates it)."""
    pairs = ", ".join(f"{n:,} {source}" for source, n in sorted(sources.items()))
    weighted = (
        f", gold and games pairs weighted {config.extra_weight:g}×"
        if {"gold", "games"} & set(sources)
        else ""
    )
    description = learned_description(
        {"held_out": {split: result.get(split) for split in ("val", "test")}},
        trained_on=f"{pairs} (secret, question) pairs{weighted} by job {job_id}",
    )
    name = f"learned-job{job_id}"
    spec = ModelSpec.objects.filter(name=name).first() or ModelSpec(name=name)
    for key, value in dict(
        kind=ModelKind.LEARNED,
        role=ModelRole.JUDGE,
        path=result["weights"],
        options={},
        produced_by_id=job_id,
        is_active=True,
        description=description,
    ).items():
        setattr(spec, key, value)
    spec.full_clean()
    spec.save()
    Checkpoint.objects.filter(job_id=job_id, path=result["weights"]).update(model_spec=spec)
    return spec


def run(config: LearnedJudgeJobConfig, reporter) -> dict:
    from training.judge.trainer import run as train

    rows = training_rows(config)
    sources = dict(Counter(r.source for r in rows))
    reporter.log(f"(secret, question) pairs by source: {sources}")
    extra = [r for r in rows if r.source in ("gold", "games")]
    if extra:
        path = data.write_rows(extra, Path(reporter.output_dir) / EXTRA_ROWS_FILE)
        reporter.artifact(
            "judge-rows",
            EXTRA_ROWS_FILE,
            path,
            meta={s: n for s, n in sources.items() if s in ("gold", "games")},
        )
    result = train(config, reporter, rows=rows)
    spec = model_spec_register_learned(
        job_id=reporter.job_id, result=result, config=config, sources=sources
    )
    return {**result, "rows_by_source": sources, "model_spec": spec.name}
