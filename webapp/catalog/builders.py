"""Turn registry rows (ModelSpec) into games' judges and guessers, cached per process."""

from __future__ import annotations

import logging
import threading
from functools import lru_cache

from games.base_models import BaseModelError
from games.guessers.base import Guesser
from games.judges.base import Judge
from games.judges.cross_encoder import PretrainedJudgeError
from games.judges.learned import WeightsError
from games.kb.wordnet_files import WordNetNotFoundError
from games.llm.base import PAPER_VAL_SAMPLING, SamplingParams
from games.registry import (
    SpecError,
    build_guesser,
    build_judge,
    one_row_options,
    precision_options,
)
from webapp.catalog.models import ModelKind, ModelSpec

_lock = threading.Lock()
log = logging.getLogger(__name__)


def spec_string(spec: ModelSpec) -> str:
    """The games registry spec of a ModelSpec (see games/registry.py)."""
    if spec.kind == ModelKind.KB:
        options = spec.options or {}
        parts = [p for p in (options.get("sense"), "closed" if options.get("closed") else "") if p]
        return ":".join(["kb", *parts])
    if spec.kind in (ModelKind.PRETRAINED, ModelKind.LEARNED, ModelKind.HYBRID):
        return f"{spec.kind}:{spec.path}" if spec.path else spec.kind  # empty: the shipped one
    if spec.kind in ModelKind.POOL_GUESSERS:
        return spec.kind
    if spec.kind == ModelKind.NATURAL:
        return f"natural:{spec.path}" if spec.path else "natural"  # empty: the shipped data
    if spec.kind == ModelKind.TRANSFORMERS:
        return f"hf:{spec.path}"
    if spec.kind == ModelKind.VLLM:
        return f"vllm:{spec.path}"
    if spec.kind == ModelKind.OPENAI:
        return f"openai:{spec.endpoint}#{spec.remote_model}"
    if spec.kind == ModelKind.ENCODER:
        raise SpecError(
            f"{spec.name} is a base model for training judges: it neither asks nor answers"
        )
    raise ValueError(f"model spec {spec.name} has an unknown kind {spec.kind!r}")


def _backend_options(spec: ModelSpec, precision: str | None = None, one_row: bool = False) -> dict:
    """The adapter of a trained model; `precision` where the spec runs a model here (a job's
    field); `one_row` for a person's game (games.precision: `auto` stays float32 on a CPU)."""
    options = {}
    if spec.adapter_path and spec.kind in ModelKind.TRAINABLE:
        options["adapter"] = spec.adapter_path
    spec_str = spec_string(spec)
    options.update(precision_options(spec_str, precision))
    if one_row:
        options.update(one_row_options(spec_str))
    return options


def trained_sampling(base: ModelSpec | None, role: str = "guesser") -> dict:
    """The sampling of a guesser trained from `base`: the base's token budget, decoded as the
    paper evaluates (PAPER_VAL_SAMPLING: T 0.7, top-p 0.8, top-k 20), not the base's (a training
    base's T 1.0); a trained judge keeps its base's."""
    inherited = dict(base.sampling or {}) if base is not None else {}
    return {**inherited, **PAPER_VAL_SAMPLING} if role in ("guesser", "both") else inherited


def _guesser_options(
    spec: ModelSpec, precision: str | None, one_row: bool, sampling: dict | None
) -> dict:
    """A language-model guesser plays with the spec's sampling, `sampling`'s fields replacing
    its own; one that knows a word pool (options.pool_word_list) reports the pool words the
    answers leave (its top candidates)."""
    options = _backend_options(spec, precision, one_row)
    if spec.kind not in ModelKind.LLM:
        return options
    if spec.sampling or sampling:
        options["sampling"] = SamplingParams(**{**(spec.sampling or {}), **(sampling or {})})
    pool = (spec.options or {}).get("pool_word_list")
    if pool:
        from webapp.catalog.selectors import word_list_latest

        word_list = word_list_latest(pool)
        if word_list is not None:
            words = word_list.entries.order_by("word__text").values_list("word__text", flat=True)
            options["candidate_pool"] = tuple(words)
    return options


@lru_cache(maxsize=32)
def _judge(spec_id: int, spec_str: str, name: str, options_key: tuple) -> Judge:
    judge = build_judge(spec_str, **dict(options_key))
    judge.name = name
    return judge


@lru_cache(maxsize=32)
def _guesser(
    spec_id: int, spec_str: str, name: str, options_key: tuple, pool: tuple | None
) -> Guesser:
    guesser = (
        build_guesser(spec_str, pool=pool, **dict(options_key))
        if spec_str in ("infogain", "random")
        else build_guesser(spec_str, **dict(options_key))
    )
    guesser.name = name
    return guesser


def judge_for(spec: ModelSpec, *, precision: str | None = None, one_row: bool = False) -> Judge:
    """The judge of `spec`, built once per process and options; `precision` (a job's field) and
    `one_row` (a person's game) apply to the kinds that run a model here."""
    with _lock:
        options = _backend_options(spec, precision, one_row)
        return _judge(spec.pk, spec_string(spec), spec.name, tuple(sorted(options.items())))


def guesser_for(
    spec: ModelSpec,
    pool: list[str] | None = None,
    *,
    precision: str | None = None,
    one_row: bool = False,
    sampling: dict | None = None,
) -> Guesser:
    """The guesser of `spec` (see judge_for); `sampling` (SamplingParams fields) replaces the
    spec's own, e.g. games.llm.base.PAPER_VAL_SAMPLING."""
    with _lock:
        return _guesser(
            spec.pk,
            spec_string(spec),
            spec.name,
            tuple(sorted(_guesser_options(spec, precision, one_row, sampling).items())),
            tuple(pool) if pool is not None else None,
        )


# Errors whose text this project writes for people (a weights file and how to rebuild it, a bad
# spec): shown as they are. Any other error's text (paths, addresses) goes only to the log.
EXPLAINED_ERRORS = (
    WeightsError,
    PretrainedJudgeError,
    BaseModelError,
    SpecError,
    WordNetNotFoundError,
)


def model_unusable(what: str, err: Exception) -> str:
    """'<what> cannot be used right now', with the reason when the error explains itself."""
    if isinstance(err, EXPLAINED_ERRORS):
        return f"{what} cannot be used right now ({err})."
    log.error("%s cannot be used", what, exc_info=err)
    return f"{what} cannot be used right now."
