"""Build judges and guessers from short spec strings (CLI, web app and jobs share them).

Specs: `kb` (or `kb:any`, `kb:first` for other sense modes; `:closed` appended, e.g.
`kb:closed` or `kb:any:closed`, answers No to every fact it does not store), `infogain`, `random`,
`natural` (natural questions over a learned answer model, games.guessers.natural; settings as
`natural:noise=0.1,guess_threshold=0.6` or a data file as `natural:PATH`),
`hf:PATH` (a transformers folder, a base model's name such as `hf:smollm2-135m-instruct`
(games.base_models), or a hub id), `openai:URL#MODEL`, `vllm:PATH`, and for judges `pretrained`
(the shipped cross-encoder judge) or `pretrained:PATH` (a folder a judge job wrote), `learned`
(the shipped weights) or `learned:PATH`, `kb+learned` (or `kb+learned:PATH`) and
`ensemble:SPEC,SPEC,...`. A spec of a kind that runs a local model (`hf`, `vllm`, `pretrained`)
may end in `?precision=auto|float32|bfloat16` (games.precision; the `precision=` option does the
same). Heavy modules are imported only when a spec needs them. LLM guessers
take `question_extraction=` (`reply`, the default, or `first_question`; games.llm.chat) and
`candidate_pool=` (words whose guesses the model scores after each answer: its top candidates); a
shipped guesser's folder (games/data/models/*) gives its sampling unless `sampling=` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from games.guessers.base import Guesser
from games.judges.base import Judge

GUESSER_KINDS = ("infogain", "natural", "random", "hf", "openai", "vllm")
NATURAL_SETTINGS = {
    "noise": float,
    "prior_exponent": float,
    "guess_threshold": float,
    "final_guesses": int,
    "temperature": float,
    "noun_cap": lambda v: v.lower() in ("1", "true", "yes"),
}
JUDGE_KINDS = ("kb", "pretrained", "learned", "kb+learned", "hf", "openai", "vllm", "ensemble")


PRECISION_KINDS = ("hf", "vllm", "pretrained")  # kinds whose model runs here, at a precision


class SpecError(ValueError):
    pass


def _split(spec: str) -> tuple[str, str]:
    spec = (spec or "").strip()
    kind, _, target = spec.partition(":")
    return kind.lower(), target


def split_precision(spec: str) -> tuple[str, str | None]:
    """(the spec without its `?precision=` suffix, the precision named there or None)."""
    from games.precision import PrecisionError, normalise

    spec = (spec or "").strip()
    head, sep, tail = spec.rpartition("?precision=")
    if not sep:
        return spec, None
    try:
        return head, normalise(tail)
    except PrecisionError as err:
        raise SpecError(str(err)) from err


def _precision_option(spec: str, options: dict[str, Any]) -> str:
    """The spec without its precision suffix; the precision (suffix or option) moved into
    `options`, checked: only kinds that run a model take one."""
    from games.precision import PrecisionError, normalise

    spec, named = split_precision(spec)
    given = options.pop("precision", None)
    precision = named or given
    if precision is None:
        return spec
    kind = _split(spec)[0]
    if kind not in PRECISION_KINDS:
        raise SpecError(
            f"{kind or spec!r} runs no model here: precision applies to "
            f"{', '.join(PRECISION_KINDS)} specs only"
        )
    try:
        options["precision"] = normalise(precision)
    except PrecisionError as err:
        raise SpecError(str(err)) from err
    return spec


def _kind_of(spec: str) -> str:
    """The kind of a spec, its precision suffix set aside."""
    return _split(split_precision(spec)[0])[0]


def precision_options(spec: str, precision: str | None) -> dict[str, str]:
    """`{"precision": precision}` for a spec whose model runs here (PRECISION_KINDS), else {}:
    what a job with a `precision` field passes when it builds a player from any spec. `auto`
    passes nothing: the constructors' default, and a spec's own `?precision=` stands."""
    if precision in (None, "", "auto") or _kind_of(spec) not in PRECISION_KINDS:
        return {}
    return {"precision": precision}


def one_row_options(spec: str) -> dict[str, bool]:
    """`{"one_row": True}` for a spec decoding with a local transformers model (hf): a person's
    game, one chat at a time, where `auto` stays float32 on a CPU (games.precision); else {}."""
    return {"one_row": True} if _kind_of(spec) == "hf" else {}


def precision_record(asked: str | None, **players: Any) -> dict[str, str | None]:
    """What a run records: the precision asked for, and what each player's model resolved it to
    (None for a player that runs no model here)."""
    return {"asked": asked, **{name: player_precision(p) for name, p in players.items()}}


def player_precision(player: Any) -> str | None:
    """The resolved precision a built guesser or judge runs its model at (its backend's, or its
    own for a pretrained judge); None for players that run no model here."""
    for holder in (getattr(player, "backend", None), player):
        value = getattr(holder, "precision", None)
        if isinstance(value, str):
            return value
    return None


def _backend(kind: str, target: str, options: dict[str, Any]):
    from games.llm import build_backend

    if not target:
        raise SpecError(f"the spec {kind}: needs a model (a folder, a hub id or URL#MODEL)")
    backend_kind = "transformers" if kind == "hf" else kind
    return build_backend(f"{backend_kind}:{target}", **options)


def build_judge(spec: str, **options: Any) -> Judge:
    spec = _precision_option(spec, options)
    kind, target = _split(spec)
    if kind == "kb":
        return _kb_judge(target, options)
    if kind == "pretrained":
        from games.judges.cross_encoder import PretrainedJudge

        path = target or options.pop("path", None) or None
        extra = {"precision": options.pop("precision")} if "precision" in options else {}
        return PretrainedJudge(path, abstain=float(options.pop("abstain", 0.0)), **extra)
    if kind in ("learned", "kb+learned"):
        from games.judges.learned import LearnedJudge

        path = target or options.pop("path", None) or None
        learned = LearnedJudge(path, abstain=float(options.pop("abstain", 0.0)))
        if kind == "learned":
            return learned
        from games.judges.hybrid import HybridJudge

        return HybridJudge(_kb_judge("", options), learned, name=spec.strip())
    if kind == "ensemble":
        from games.judges.ensemble import EnsembleJudge

        members = [s for s in target.split(",") if s.strip()]
        if len(members) < 2:
            raise SpecError("ensemble: needs at least two judge specs, e.g. ensemble:kb,kb:any")
        return EnsembleJudge([build_judge(m) for m in members])
    if kind in ("hf", "openai", "vllm"):
        from games.judges.llm import LLMJudge

        name = options.pop("name", None)
        return LLMJudge(_backend(kind, target, options), name=name or spec)
    raise SpecError(f"unknown judge spec {spec!r}; use one of: {', '.join(JUDGE_KINDS)}")


def _kb_judge(target: str, options: dict[str, Any]) -> Judge:
    from games.judges.kb import KBJudge
    from games.kb import DEFAULT_SENSE, SENSE_MODES

    parts = [p for p in target.split(":") if p]
    unknown = [p for p in parts if p not in (*SENSE_MODES, "closed")]
    if unknown:
        raise SpecError(
            f"unknown kb option {unknown[0]!r}; "
            f"use a sense mode ({', '.join(SENSE_MODES)}) and/or closed"
        )
    senses = [p for p in parts if p in SENSE_MODES]
    sense = senses[0] if senses else options.pop("sense", None) or DEFAULT_SENSE
    closed = "closed" in parts or bool(options.pop("closed", False))
    return KBJudge(sense=sense, closed=closed)


def build_guesser(spec: str, *, pool: Iterable[str] | None = None, **options: Any) -> Guesser:
    spec = _precision_option(spec, options)
    kind, target = _split(spec)
    if kind == "infogain":
        from games.guessers.infogain import InfoGainGuesser

        return InfoGainGuesser(pool=list(pool) if pool is not None else None, **options)
    if kind == "natural":
        from games.guessers.natural import NaturalGuesser

        settings: dict[str, Any] = {}
        if "=" in target:
            for part in filter(None, (p.strip() for p in target.split(","))):
                key, _, value = part.partition("=")
                if key not in NATURAL_SETTINGS:
                    raise SpecError(
                        f"unknown natural setting {key!r}; use {', '.join(NATURAL_SETTINGS)}"
                    )
                try:
                    settings[key] = NATURAL_SETTINGS[key](value)
                except ValueError as err:
                    raise SpecError(f"natural setting {key}={value!r} is not a number") from err
        elif target:
            settings["path"] = target
        settings.update(options)
        settings.pop("name", None)
        return NaturalGuesser(name=spec.strip() or "natural", **settings)
    if kind == "random":
        from games.guessers.random import RandomGuesser

        return RandomGuesser(pool=list(pool) if pool is not None else None, **options)
    if kind in ("hf", "openai", "vllm"):
        from games.guessers.llm import LLMGuesser
        from games.llm.chat import GuesserFormat

        sampling = options.pop("sampling", None) or _shipped_sampling(kind, target)
        name = options.pop("name", None)
        kwargs = {"sampling": sampling} if sampling is not None else {}
        candidate_pool = options.pop("candidate_pool", None)  # the model's belief over its pool
        if candidate_pool is not None:
            kwargs["candidate_pool"] = candidate_pool
        extraction = options.pop(
            "question_extraction", None
        )  # reply (the default) or first_question
        if extraction is not None:
            kwargs["question_extraction"] = extraction
        # a model trained here plays with the prompt it was trained on (recorded in its folder)
        chat_format = options.pop("chat_format", None) or GuesserFormat.for_model(
            *((options.get("adapter"), target) if kind != "openai" else ())
        )
        return LLMGuesser(
            _backend(kind, target, options), name=name or spec, chat_format=chat_format, **kwargs
        )
    raise SpecError(f"unknown guesser spec {spec!r}; use one of: {', '.join(GUESSER_KINDS)}")


def _shipped_sampling(kind: str, target: str):
    """The sampling a shipped guesser's folder records (games.llm.chat.model_play_settings), so it
    plays as it was evaluated; None for any other model."""
    if kind == "openai":
        return None
    from games.llm.base import SamplingParams
    from games.llm.chat import model_play_settings

    recorded = model_play_settings(target).get("sampling")
    return SamplingParams(**recorded) if isinstance(recorded, dict) else None
