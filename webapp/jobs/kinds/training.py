"""Training jobs (knowledge, sft, dpo, judge_sft) on the web side: resolve model-spec and word-list
names, stored games and the teacher from the database, call the training runner, and register
every checkpoint it saves as a new ModelSpec (a transformers guesser: the checkpoint folder, or the
base plus the checkpoint as LoRA adapter), so it can be played, evaluated and trained further.

dpo's `rating_model` is a model-spec name too (`DPOWebConfig`): checked before queueing and resolved
to the games registry spec the trainer expects when the job runs.

sft and dpo jobs take `processes` (`SFTWebConfig`, `DPOWebConfig`): more than 1 runs the trainer
data parallel under torchrun (webapp.jobs.processes), rank 0 building the training rows
(training.common.ranks), reporting and registering the checkpoints.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from training.common.config import check_between, knob
from training.dpo.config import DPOJobConfig
from training.sft.config import SFTJobConfig
from webapp.catalog.builders import trained_sampling
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec, WordListEntry
from webapp.catalog.selectors import word_list_latest
from webapp.jobs.kinds.checks import check_model, check_word_list, processes_knob
from webapp.jobs.models import Checkpoint, Job
from webapp.jobs.processes import check_processes, is_main, main_first


# -- the sft and dpo configs of the web app --------------------------------------------------------
@dataclass(frozen=True)
class SFTWebConfig(SFTJobConfig):
    """SFTJobConfig plus how many processes the job runs in (data parallel: each process trains
    on its share of every global batch)."""

    processes: int = processes_knob()

    def __post_init__(self) -> None:
        super().__post_init__()
        check_between(self, "processes")


@dataclass(frozen=True)
class DPOWebConfig(DPOJobConfig):
    """DPOJobConfig whose `rating_model` is a model-spec name, like `base_model` and `judge`:
    check_dpo looks it up before queueing and run_dpo hands the trainer a DPOJobConfig holding its
    games registry spec. Every other check is DPOJobConfig's (only the spec syntax check of
    `rating_model` is skipped: a name is not KIND:TARGET). `processes` as SFTWebConfig's."""

    rating_model: str = knob(
        "",
        (
            "reward=rating: the model spec of the rating judge (an active transformers, "
            "vLLM or OpenAI-compatible model; the base model's own spec reuses the policy)"
        ),
    )

    processes: int = processes_knob()

    def __post_init__(self) -> None:
        super().__post_init__()
        check_between(self, "processes")

    def check_rating_model(self, spec: str) -> None:
        """A name: check_dpo looks it up in the catalog."""


# -- references ----------------------------------------------------------------------------------
def words_of(name: str, split: str = "") -> list[str]:
    entries = WordListEntry.objects.filter(word_list=word_list_latest(name))
    if split:
        entries = entries.filter(split=split)
    return list(entries.order_by("id").values_list("word__text", flat=True))


def check_base(config, errors: dict) -> None:
    """The base model: an active transformers (or vLLM) model spec with a model folder (or the
    name of a pretrained base whose converted folder is ready: games.base_models)."""
    from games.base_models import is_base_model, problems

    spec = check_model(
        errors, "base_model", config.base_model, kinds=ModelKind.TRAINABLE, what="transformers"
    )
    if spec is not None and not spec.path:
        errors["base_model"] = [f"the model spec {spec.name!r} has no model folder"]
    elif spec is not None and is_base_model(spec.path) and problems(spec.path.strip()):
        errors["base_model"] = [
            f"the base model {spec.path.strip()!r} is not ready "
            f"({'; '.join(problems(spec.path.strip()))}): run `make setup`"
        ]


def stored_games(config):
    from webapp.play.models import Game

    games = Game.objects.exclude(outcome="playing")
    if config.games_guesser:
        games = games.filter(guesser__name=config.games_guesser)
    if config.games_job:
        games = games.filter(job_id=config.games_job)
    if config.selection != "all":
        games = games.filter(outcome="won")
    if config.word_list and word_list_latest(config.word_list) is not None:
        games = games.filter(secret__in=words_of(config.word_list, config.split))
    return games.order_by("id")


def _check_games(config, errors: dict) -> None:
    check_model(errors, "judge", config.judge, "judge")
    if config.source == "teacher":
        check_model(errors, "teacher", config.teacher, "guesser")
        check_word_list(errors, "word_list", config.word_list, config.split)
    else:
        if config.games_guesser:
            check_model(errors, "games_guesser", config.games_guesser)
        if config.word_list:
            check_word_list(errors, "word_list", config.word_list, config.split)
        if not errors and not stored_games(config).exists():
            errors["source"] = [
                "no stored game matches (games_guesser, games_job, word_list, selection)"
            ]
    if config.pool_word_list:
        check_word_list(errors, "pool_word_list", config.pool_word_list)


def check_knowledge(config) -> None:
    errors: dict = {}
    check_base(config, errors)
    check_word_list(errors, "word_list", config.word_list)
    if errors:
        raise ValidationError(errors)


def _check_rating_model(config, errors: dict) -> None:
    if not config.rating_model:
        return  # reward=rating without one is refused by the config itself
    spec = check_model(
        errors,
        "rating_model",
        config.rating_model,
        kinds=ModelKind.LLM,
        what="transformers, vLLM or OpenAI-compatible",
    )
    if spec is not None and not (spec.endpoint if spec.kind == ModelKind.OPENAI else spec.path):
        errors["rating_model"] = [
            f"the model spec {spec.name!r} has no "
            f"{'endpoint' if spec.kind == ModelKind.OPENAI else 'model folder'}"
        ]


def check_games_job(config) -> None:
    """sft and judge_sft: the base model, the teacher / stored games, the judge and the word
    lists."""
    errors: dict = {}
    check_base(config, errors)
    _check_games(config, errors)
    if errors:
        raise ValidationError(errors)


def check_sft(config) -> None:
    """check_games_job; source=reference reads the shipped turns (or `reference_file` on the
    worker), so only the base model is looked up; `processes` within the deployment's."""
    errors: dict = {}
    check_base(config, errors)
    if config.source != "reference":
        _check_games(config, errors)
    check_processes(config, errors)
    if errors:
        raise ValidationError(errors)


def check_dpo(config) -> None:
    """check_games_job plus the rating judge (`rating_model`, when named) and `processes`."""
    errors: dict = {}
    check_base(config, errors)
    _check_games(config, errors)
    _check_rating_model(config, errors)
    check_processes(config, errors)
    if errors:
        raise ValidationError(errors)


# -- checkpoints become model specs ----------------------------------------------------------------
@transaction.atomic
def model_spec_register_checkpoint(
    *,
    checkpoint: Checkpoint,
    kind: str,
    base: ModelSpec,
    base_path: str,
    role: str = ModelRole.GUESSER,
) -> ModelSpec:
    """A ModelSpec (a guesser, or a judge for judge_sft) for a saved checkpoint (idempotent per job
    and step)."""
    name = f"{kind}-job{checkpoint.job_id}-step{checkpoint.step}"
    fields = dict(
        kind=ModelKind.TRANSFORMERS,
        role=role,
        path=base_path if checkpoint.is_adapter else checkpoint.path,
        adapter_path=checkpoint.path if checkpoint.is_adapter else "",
        sampling=trained_sampling(base, role),
        parent=base,
        produced_by_id=checkpoint.job_id,
        is_active=True,
        description=f"{kind} job {checkpoint.job_id}, step {checkpoint.step}, from {base.name}"
        f"{' (LoRA adapter)' if checkpoint.is_adapter else ''}.",
    )
    # a new checkpoint is offered to no player until a researcher publishes it (a re-registration
    # keeps the researcher's choice)
    spec = ModelSpec.objects.filter(name=name).first() or ModelSpec(name=name, published=False)
    for key, value in fields.items():
        setattr(spec, key, value)
    spec.full_clean()
    spec.save()
    Checkpoint.objects.filter(pk=checkpoint.pk).update(model_spec=spec)
    return spec


class RegisteringReporter:
    """A DatabaseReporter whose checkpoints are also registered as model specs as they are saved."""

    def __init__(
        self, reporter, *, kind: str, base: ModelSpec, base_path: str, role: str = ModelRole.GUESSER
    ):
        self._reporter, self.kind, self.base, self.base_path, self.role = (
            reporter,
            kind,
            base,
            base_path,
            role,
        )
        self.specs: list[ModelSpec] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reporter, name)

    def checkpoint(self, step, path, *, metrics=None, config=None, is_adapter=False):
        row = self._reporter.checkpoint(
            step, path, metrics=metrics, config=config, is_adapter=is_adapter
        )
        self.specs.append(
            model_spec_register_checkpoint(
                checkpoint=row,
                kind=self.kind,
                base=self.base,
                base_path=self.base_path,
                role=self.role,
            )
        )
        return row


# -- runners ---------------------------------------------------------------------------------------
def _base(config, reporter) -> tuple[ModelSpec, str]:
    """The base spec and the folder to train: its path, or its path + adapter merged once."""
    from training.common.models import merge_adapter

    spec = ModelSpec.objects.get(name=config.base_model)
    if not spec.adapter_path:
        return spec, spec.path
    reporter.log(f"merging the adapter of {spec.name} into its base")
    return spec, str(
        merge_adapter(spec.path, spec.adapter_path, Path(reporter.output_dir) / "base-merged")
    )


def _game_inputs(config, reporter) -> dict[str, Any]:
    """The judge, teacher, words or stored games the trainer builds its rows from (none for the
    ranks other than 0 of a multi-process job: rank 0 builds the rows)."""
    from games.registry import build_guesser
    from webapp.catalog.builders import guesser_for, judge_for
    from webapp.play.records import trajectory_of

    if not is_main(reporter):
        return {}
    inputs: dict[str, Any] = {"judge": judge_for(ModelSpec.objects.get(name=config.judge))}
    if config.pool_word_list:
        inputs["pool"] = words_of(config.pool_word_list)
    if config.source == "games":
        games = stored_games(config).select_related("guesser", "judge").prefetch_related("turns")
        inputs["trajectories"] = [trajectory_of(g) for g in games]
        return inputs
    inputs["words"] = words_of(config.word_list, config.split)
    teacher = ModelSpec.objects.get(name=config.teacher)

    def make_teacher(pool):
        if teacher.kind in ModelKind.POOL_GUESSERS:
            options = {"max_turns": config.max_turns} if teacher.kind == ModelKind.INFOGAIN else {}
            guesser = build_guesser(teacher.kind, pool=pool, **options)
            guesser.name = teacher.name
            return guesser
        return guesser_for(teacher)

    inputs["make_teacher"] = make_teacher
    return inputs


def _set_aside_stale_output(reporter) -> None:
    """Runners resume from checkpoint folders in their output directory. A job that never saved a
    checkpoint and was never re-queued has nothing to resume: anything there belongs to an earlier
    job with the same id (a reset database), so it is moved aside, not resumed."""
    out = Path(reporter.output_dir)
    job = Job.objects.get(pk=reporter.job_id)
    if job.requeues or Checkpoint.objects.filter(job_id=job.pk).exists() or not any(out.iterdir()):
        return
    stale = out.with_name(f"{out.name}-stale-{time.time_ns()}")
    out.rename(stale)
    out.mkdir()
    reporter.log(f"moved files of an earlier job with this id to {stale}", level="warning")


def _run(
    kind: str,
    runner,
    config,
    reporter,
    role: str = ModelRole.GUESSER,
    resolve: Callable[..., Any] | None = None,
    **inputs,
) -> dict:
    """`resolve(config, reporter, base, base_path)`: the config the runner gets (default:
    `config`). In a multi-process job (webapp.jobs.processes) rank 0 prepares the output folder and
    the merged base first, and only rank 0 registers checkpoints."""
    with main_first(reporter) as main:
        if main:
            _set_aside_stale_output(reporter)
        base, base_path = _base(config, reporter)  # merged once, by rank 0; the others reuse it
        if resolve is not None:
            config = resolve(config, reporter, base, base_path)
    registering = RegisteringReporter(
        reporter, kind=kind, base=base, base_path=base_path, role=role
    )
    result = runner(config, registering, model_path=base_path, **inputs)
    if not main:
        return result
    final = (
        Checkpoint.objects.filter(job_id=reporter.job_id, path=result["final_checkpoint"])
        .order_by("-id")
        .first()
    )
    if final is None:  # saved by an attempt that died before recording it
        final = reporter.checkpoint(
            result["global_step"], result["final_checkpoint"], is_adapter=result["is_adapter"]
        )
    spec = final.model_spec or model_spec_register_checkpoint(
        checkpoint=final, kind=kind, base=base, base_path=base_path, role=role
    )
    specs = list(
        ModelSpec.objects.filter(produced_by_id=reporter.job_id)
        .order_by("id")
        .values_list("name", flat=True)
    )
    return {**result, "model_spec": spec.name, "model_specs": specs, "base_model": base.name}


def run_knowledge(config, reporter) -> dict:
    from training.knowledge.trainer import run

    return _run("knowledge", run, config, reporter, words=words_of(config.word_list))


def run_sft(config, reporter) -> dict:
    from training.sft.trainer import run

    inputs = {} if config.source == "reference" else _game_inputs(config, reporter)
    return _run("sft", run, config, reporter, **inputs)


def _rating_spec(name: str, reporter, base: ModelSpec, base_path: str) -> str:
    """The games registry spec of the rating judge named `name`: the base model's own spec is the
    folder the policy is loaded from (so the trainer reuses the policy); a LoRA adapter is merged
    into its base once, as the base model's is; anything else is its spec string."""
    from training.common.models import merge_adapter
    from webapp.catalog.builders import spec_string

    spec = ModelSpec.objects.filter(name=name).first()
    if spec is None:
        raise ValueError(f"rating_model: no model spec named {name!r}")
    if spec.pk == base.pk:
        return f"hf:{base_path}"
    if spec.adapter_path and spec.kind in ModelKind.TRAINABLE:
        reporter.log(f"merging the adapter of {spec.name} (rating_model) into its base")
        merged = merge_adapter(
            spec.path, spec.adapter_path, Path(reporter.output_dir) / "rating-merged"
        )
        return f"{'hf' if spec.kind == ModelKind.TRANSFORMERS else 'vllm'}:{merged}"
    return spec_string(spec)


def dpo_training_config(
    config: DPOWebConfig, reporter, base: ModelSpec, base_path: str
) -> DPOJobConfig:
    """The trainer's DPOJobConfig: `rating_model` the judge's games registry spec (reward=rating),
    else empty (unused)."""
    values = {f.name: getattr(config, f.name) for f in dataclasses.fields(DPOJobConfig) if f.init}
    values["rating_model"] = ""
    if config.reward == "rating":
        values["rating_model"] = _rating_spec(config.rating_model, reporter, base, base_path)
        reporter.log(f"rating judge: {config.rating_model} ({values['rating_model']})")
    return DPOJobConfig(**values)


def run_dpo(config, reporter) -> dict:
    from training.dpo.trainer import run

    return _run(
        "dpo", run, config, reporter, resolve=dpo_training_config, **_game_inputs(config, reporter)
    )


def run_judge_sft(config, reporter) -> dict:
    from training.judge.llm import run

    return _run(
        "judge_sft", run, config, reporter, role=ModelRole.JUDGE, **_game_inputs(config, reporter)
    )
