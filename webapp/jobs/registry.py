"""Job kinds: a frozen config dataclass (validated in __post_init__) and a runner, by name.

Runners are dotted paths imported only in the worker, so the web process loads configs only.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError

from training.common.config import build_checked
from webapp.core.hygiene import check_text


@dataclass(frozen=True)
class JobKind:
    name: str
    config: str  # "module:Class"
    runner: str  # "module:function" taking (config, reporter)
    description: str = ""
    gpu: bool = False  # model-heavy: runs on settings.JOBS_GPU_QUEUE
    # optional "module:function(config)" validating database references (raises ValidationError)
    check: str = ""
    # config fields naming model specs: a heavy one among them sends the job to the GPU queue
    models: tuple[str, ...] = ()

    def config_class(self) -> type:
        return _load(self.config)

    def runner_fn(self) -> Callable[..., Any]:
        return _load(self.runner)

    def queue_for(self, config: Any) -> str:
        from webapp.catalog.selectors import model_specs_heavy

        gpu = self.gpu or (bool(self.models) and model_specs_heavy(self.model_names(config)))
        return settings.JOBS_GPU_QUEUE if gpu else "cpu"

    def model_names(self, config: Any) -> list[str]:
        names = [getattr(config, field) for field in self.models]
        return [n for value in names for n in ((value,) if isinstance(value, str) else value)]

    def check_references(self, config: Any) -> None:
        if self.check:
            _load(self.check)(config)


def _load(dotted: str) -> Any:
    module, _, attr = dotted.partition(":")
    return getattr(importlib.import_module(module), attr)


REGISTRY: dict[str, JobKind] = {}
MAX_INT = 2**63 - 1  # integer fields are stored as JSON and may become database values


def register(kind: JobKind) -> JobKind:
    REGISTRY[kind.name] = kind
    return kind


register(
    JobKind(
        "smoke",
        "training.smoke:SmokeConfig",
        "training.smoke:run",
        "Round-trip check of the job system.",
    )
)
register(
    JobKind(
        "smoke_ranks",
        "training.smoke:RanksSmokeConfig",
        "training.smoke:run",
        "Round-trip check of a multi-process job: every rank runs the smoke loop, rank 0 reports.",
        check="webapp.jobs.processes:check_job_processes",
    )
)
KINDS = "webapp.jobs.kinds"  # the package of the runners and checks of the web's job kinds


def register_web_kind(
    name: str,
    config: str,
    module: str,
    description: str,
    runner: str = "run",
    check: str = "check",
    **options: Any,
) -> JobKind:
    """Register a kind whose runner and check are functions of `webapp.jobs.kinds.<module>`."""
    where = f"{KINDS}.{module}"
    return register(
        JobKind(name, config, f"{where}:{runner}", description, check=f"{where}:{check}", **options)
    )


register_web_kind(
    "evaluation",
    "training.evaluation.config:EvaluationConfig",
    "evaluation",
    "Play a guesser against a judge over a word list, k samples per word.",
    models=("guesser", "judge"),
)
register_web_kind(
    "export",
    "webapp.jobs.kinds.export:ExportConfig",
    "export",
    "Export games, turns and trajectories as JSONL and Parquet.",
)
register_web_kind(
    "disagreements",
    "webapp.jobs.kinds.disagreements:DisagreementsConfig",
    "disagreements",
    "Run several judges over stored questions and queue where they disagree for labelling "
    "(or score judges on gold).",
    models=("judges",),
)
register_web_kind(
    "curation",
    "training.curation.config:CurationConfig",
    "curation",
    "Curate candidate nouns into a new, difficulty-rated word-list version with splits.",
    models=("guesser", "judge", "fairness_judge"),
)
register_web_kind(
    "knowledge",
    "training.knowledge.config:KnowledgeJobConfig",
    "training",
    "Knowledge stage: teach a model every pool word and its knowledge-base facts "
    "(plain causal LM).",
    runner="run_knowledge",
    check="check_knowledge",
    gpu=True,
)
register_web_kind(
    "sft",
    "webapp.jobs.kinds.training:SFTWebConfig",
    "training",
    "Turn-level SFT on a teacher's (or stored) games, or on the ΔBelief-RL paper's SFT turns "
    "(source=reference): only each turn's question is trained.",
    runner="run_sft",
    check="check_sft",
    gpu=True,
)
register_web_kind(
    "dpo",
    "webapp.jobs.kinds.training:DPOWebConfig",
    "training",
    "Multi-turn DPO: the policy's candidate next questions paired by a proxy reward "
    "(information gain, ΔBelief, success, or a judge model's 1–5 rating as in CollabLLM: "
    "reward=rating with rating_model).",
    runner="run_dpo",
    check="check_dpo",
    gpu=True,
)
register_web_kind(
    "judge_sft",
    "training.judge.llm:JudgeSFTJobConfig",
    "training",
    "SFT of an LLM judge on a reference judge's verdicts for the questions of teacher "
    "(or stored) games.",
    runner="run_judge_sft",
    check="check_games_job",
    gpu=True,
)
register_web_kind(  # gpu=False: the cpu queue whatever JOBS_GPU_QUEUE says
    "judge",
    "training.judge.config:LearnedJudgeJobConfig",
    "judge",
    "Train the learned judge (a small network over the knowledge base's facts, on a CPU) on "
    "the reference answers, the gold labels and/or stored games' verdicts; registered as a judge.",
)
register_web_kind(
    "pretrained_judge",
    "training.judge.config:PretrainedJudgeJobConfig",
    "judge",
    "Train a pretrained judge (a cross-encoder fine-tuned from minilm-l6 with LoRA) on the "
    "reference answers, the gold labels and/or stored games' verdicts; registered as a judge.",
    gpu=True,
)
register_web_kind(
    "grpo",
    "webapp.jobs.kinds.grpo:GRPOJobConfig",
    "grpo",
    "Multi-turn GRPO: G games per secret against the judge, StarPO (trajectory) or ΔBelief "
    "(per-turn) credit.",
    gpu=True,
)


def get_kind(name: str) -> JobKind:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValidationError(
            {"kind": f"unknown job kind {name!r}; known: {sorted(REGISTRY)}"}
        ) from None


_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "text"}


def _coerce(value: Any, annotation: Any, name: str) -> Any:
    """Parse a form/JSON value into the dataclass field's type (int, float, bool, str, lists of
    them); raise ValueError("<name>: expected …") for a value of another type, null included."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Union or str(origin) == "types.UnionType":
        non_none = [a for a in args if a is not type(None)]
        if type(None) in args and (value is None or value == ""):
            return None
        return _coerce(value, non_none[0], name) if len(non_none) == 1 else value
    expected = _TYPE_WORDS.get(annotation, "a list" if origin in (list, tuple) else str(annotation))
    if value is None:
        raise ValueError(f"{name}: expected {expected}, got null")
    if annotation is bool:
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
            return True
        if isinstance(value, str) and value.lower() in ("false", "0", "no", "off", ""):
            return False
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
        raise ValueError(f"{name}: expected true or false, got {value!r:.60}")
    if annotation in (int, float):
        if not isinstance(value, (int, float, str)) or isinstance(value, bool):
            raise ValueError(f"{name}: expected {expected}, got {value!r:.60}")
        try:
            number = float(value) if annotation is float else int(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{name}: expected {expected}, got {value!r:.60}") from None
        if annotation is float and not math.isfinite(number):
            raise ValueError(f"{name}: expected a finite number, got {value!r:.60}")
        if annotation is int and isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{name}: expected an integer, got {value!r:.60}")
        if annotation is int and abs(number) > MAX_INT:
            raise ValueError(f"{name}: {value!r:.60} is beyond 64 bits")
        return number
    if annotation is str:
        if not isinstance(value, str):
            raise ValueError(f"{name}: expected text, got {value!r:.60}")
        check_text(value, name)  # a NUL or lone surrogate (from JSON escapes) no database stores
        return value
    if origin in (list, tuple):
        if isinstance(value, str):
            items = [v.strip() for v in value.split(",") if v.strip()]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise ValueError(
                f"{name}: expected a list (or comma-separated text), got {value!r:.60}"
            )
        inner = args[0] if args else str
        coerced = [_coerce(v, inner, name) for v in items]
        return tuple(coerced) if origin is tuple else coerced
    return value


def build_config(kind: JobKind, params: dict[str, Any] | None) -> Any:
    """Validate params into the kind's config; raise a Django ValidationError keyed by field."""
    cls = kind.config_class()
    if params is not None and not isinstance(params, dict):
        message = f"the config must be an object of fields, not {params!r:.60}"
        raise ValidationError({"__all__": [message]})
    params = dict(params or {})
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(params) - set(fields))
    if unknown:
        errors["__all__"] = [f"unknown config fields: {', '.join(unknown)}"]
    values = {}
    for name, value in params.items():
        if name not in fields:
            continue
        try:
            values[name] = _coerce(value, hints[name], name)
        except ValueError as exc:
            errors.setdefault(name, []).append(str(exc))
    if errors:
        raise ValidationError(errors)
    try:
        return build_checked(cls, **values)
    except (TypeError, ValueError) as exc:  # ConfigErrors: every failed check, each at its field
        messages = getattr(exc, "messages", None) or [str(exc)]
        named = getattr(exc, "fields", None) or [None] * len(messages)
        for name, message in zip(named, messages):
            errors.setdefault(name or _field_named_by(message, fields), []).append(message)
        raise ValidationError(errors) from exc


def _field_named_by(message: str, fields: typing.Iterable[str]) -> str:
    """The field a check's message starts with ("samples must be …" → samples), else __all__."""
    first = re.match(r"[A-Za-z_]\w*", message)
    if first and first.group() in fields:
        return first.group()
    return max((n for n in fields if message.startswith(n)), key=len, default="__all__")


def config_to_dict(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config)
