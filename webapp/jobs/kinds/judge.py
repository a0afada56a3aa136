"""The judge jobs on the web side: `judge` trains the learned judge (games.judges.learned) and
`pretrained_judge` the pretrained judge (games.judges.cross_encoder), on the shipped reference
answers, the labelling app's gold answers and/or the yes/no verdicts a judge gave in stored games;
the result is registered as a judge model spec (`learned-job<ID>`, `pretrained-job<ID>`) that can
be played, scored on the gold set and compared like any other.

Gold and games rows weigh `extra_weight` reference rows each in the loss. A (secret, question)
pair answered several times is one row with its yes and no counts (the trainers learn the share
of yes). The learned judge is a small network that trains on a CPU (the cpu queue); the
pretrained judge fine-tunes a transformer encoder (the GPU queue where there is one).
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
from training.judge.config import LearnedJudgeJobConfig, PretrainedJudgeJobConfig
from training.judge.data import Row
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec
from webapp.catalog.services import learned_description, pretrained_description
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


JudgeJobConfig = LearnedJudgeJobConfig | PretrainedJudgeJobConfig


def training_rows(config: JudgeJobConfig) -> list[Row]:
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


def check(config: JudgeJobConfig) -> None:
    """Refuse a dataset whose rows do not exist (or a base model that cannot be loaded), before
    anything is queued."""
    errors: dict[str, list[str]] = {}
    if isinstance(config, PretrainedJudgeJobConfig):
        _check_encoder(config.base_model, errors)
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


def _check_encoder(base_model: str, errors: dict) -> None:
    """A base model's name must have its converted folder; anything else must be a folder (the
    judge job never downloads)."""
    from games.base_models import BASE_MODELS, problems

    name = base_model.strip()
    if name in BASE_MODELS:
        found = problems(name)
        if found:
            errors["base_model"] = [
                f"the base model {name!r} is not ready ({'; '.join(found)}): run `make setup`"
            ]
    elif not _is_dir(name):
        errors["base_model"] = [
            f"{name!r} is neither a base model ({', '.join(BASE_MODELS)}) nor a model folder"
        ]


def _is_dir(path: str) -> bool:
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


# -- the result becomes a judge --------------------------------------------------------------------
@transaction.atomic
def model_spec_register_judge(
    *, job_id: int, result: dict, config: JudgeJobConfig, sources: dict[str, int]
) -> ModelSpec:
    """The judge model spec of a finished job's weights (one per job: a re-run updates it):
    `learned-job<ID>` or `pretrained-job<ID>`."""
    pairs = ", ".join(f"{n:,} {source}" for source, n in sorted(sources.items()))
    weighted = (
        f", gold and games pairs weighted {config.extra_weight:g}×"
        if {"gold", "games"} & set(sources)
        else ""
    )
    trained_on = f"{pairs} (secret, question) pairs{weighted} by job {job_id}"
    held_out = {"held_out": {split: result.get(split) for split in ("val", "test")}}
    if isinstance(config, PretrainedJudgeJobConfig):
        kind, name = ModelKind.PRETRAINED, f"pretrained-job{job_id}"
        description = pretrained_description(
            {**held_out, "base_model": config.base_model, "input": config.input},
            trained_on=trained_on,
        )
    else:
        kind, name = ModelKind.LEARNED, f"learned-job{job_id}"
        description = learned_description(held_out, trained_on=trained_on)
    spec = ModelSpec.objects.filter(name=name).first() or ModelSpec(name=name)
    for key, value in dict(
        kind=kind,
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


def run(config: JudgeJobConfig, reporter) -> dict:
    if isinstance(config, PretrainedJudgeJobConfig):
        from training.judge.cross_encoder import run as train
    else:
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
    spec = model_spec_register_judge(
        job_id=reporter.job_id, result=result, config=config, sources=sources
    )
    return {**result, "rows_by_source": sources, "model_spec": spec.name}
