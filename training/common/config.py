"""Config fields shared by the training job kinds (frozen dataclasses, checked in __post_init__).

`TrainConfig` holds the optimisation, LoRA and checkpoint fields every trainer needs (defaults
from the ΔBelief-RL SFT recipe); `GameDataConfig` adds where game trajectories come from (a
teacher played through games.rollout, or stored games). Names (`base_model`, `teacher`,
`judge`, word lists) are model-spec and word-list names in the web app, and paths / games
registry specs / shipped lists on the command line.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Any

from games import precision as precision_policy
from games.types import WIN_RULES
from training.common.checks import (  # noqa: F401 (the configs and their importers read them here)
    ConfigErrors,
    _check,
    bounds_text,
    build_checked,
    check_between,
    check_choice,
    check_interval,
    check_named,
    check_precision,
    field_metadata,
)

# bounds in field metadata (read by check_between and the launch forms' number inputs)
UNIT_FRACTION = {"min": 0, "max": 1, "max_open": True}  # [0, 1)
OPEN_UNIT_INTERVAL = {"min": 0, "max": 1, "min_open": True, "max_open": True}  # (0, 1)
POSITIVE_FRACTION = {"min": 0, "max": 1, "min_open": True}  # (0, 1]
SCHEDULERS = ("cosine", "linear", "constant", "constant_with_warmup")
PRECISIONS = precision_policy.PRECISIONS  # auto | float32 | bfloat16 (bf16, fp32 accepted)
SOURCES = ("teacher", "games")
SELECTIONS = ("fastest", "won", "all")
SPLITS = ("", "sft", "rl", "val", "test")
GUESSER_PROMPT_CHOICES = (
    "",
    "paper",
    "short",
)  # "": as the base model was trained (games.llm.chat)


def knob(
    default: Any = dataclasses.MISSING,
    help: str = "",  # noqa: A002 (the word the forms and CLIs show it under)
    *,
    factory: Any = dataclasses.MISSING,
    **metadata: Any,
) -> Any:
    """A config field: its default (or `factory`), help text and the rest of its metadata
    (choices, bounds "min"/"max", ...), as the launch forms and check_between read them.
    `paper=` records the ΔBelief-RL paper's setting where its scripts fix one (a value, or
    {run: value} where its CIA and StarPO runs differ); the docs' config reference shows it."""
    metadata = {"help": help, **metadata} if help else metadata
    if factory is not dataclasses.MISSING:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def check_adamw(config: Any, learning_rate_message: str = "") -> None:
    """The AdamW settings every trainer shares (TrainConfig's jobs and GRPO), within their fields'
    bounds: learning rate (`learning_rate_message` where a value means more, as GRPO's 0 the
    paper's), weight decay, betas and gradient clipping."""
    if learning_rate_message:
        check_between(config, "learning_rate", message=learning_rate_message)
    else:
        check_interval(config, "learning_rate")
    check_interval(config, "weight_decay")
    for name in ("adam_beta1", "adam_beta2"):
        betas = f"adam_beta1 and adam_beta2 must be {bounds_text(config, name)}"
        check_between(config, name, message=betas)
    check_interval(config, "max_grad_norm")


def precision_knob(paper: str | None = None) -> Any:
    """The `precision` field every config that trains or plays a model has (games.precision)."""
    extra = {"paper": paper} if paper else {}
    return knob("auto", precision_policy.HELP, choices=PRECISIONS, **extra)


def check_split(config: Any, name: str = "split") -> None:
    """The field `name` of `config` is one of SPLITS ("" = every split), else a ValueError listing
    them."""
    _check(
        getattr(config, name) in SPLITS,
        f"{name} must be one of {', '.join(repr(s) for s in SPLITS)}",
    )


def guesser_prompt_field() -> Any:
    """The `guesser_prompt` field of the jobs that train a guesser (sft, dpo, grpo)."""
    return field(
        default="",
        metadata={
            "help": "the guesser's prompt: paper (ΔBelief-RL's, ~300 tokens) "
            "or short (a few dozen, for small models trained from scratch); "
            "empty = the one the base model was trained with, else paper",
            "choices": GUESSER_PROMPT_CHOICES,
        },
    )


def base_model_knob(what: str) -> Any:
    """The `base_model` field of a trainer: `what` (the model, the policy) it starts from."""
    return knob(
        "tiny-llama",
        f"{what} to start from: a model spec name (web) or a model folder / hub id (command line)",
    )


def judge_knob(help_text: str) -> Any:
    """The `judge` field of the jobs that play games: the knowledge-base judge by default."""
    return knob("kb", help_text)


def guesser_knob(help_text: str) -> Any:
    """A field naming the guesser that plays (evaluation's and curation's `guesser`, the SFT/DPO
    `teacher`): information gain by default."""
    return knob("infogain", help_text)


def word_list_knob(default: str, what: str) -> Any:
    """A field naming a word list of `what`: a word list name (web) or a file (command line)."""
    return knob(default, f"{what} (a word list name, or a file on the command line)")


def split_knob(help_text: str = "only words of this split (empty = all)") -> Any:
    """A field naming one of SPLITS of a word list ("" = every word, shown as "(all)")."""
    return knob("", help_text, choices=SPLITS, blank="(all)")


def limit_words_knob() -> Any:
    """The `limit_words` field (also evaluation's `limit`): only the first N words, 0 = all."""
    return knob(0, "only the first N words (0 = all)", min=0)


def max_turns_knob(help_text: str = "questions per game", **metadata: Any) -> Any:
    """The `max_turns` field of the jobs that play games: 20 questions, at most 200 (`metadata`:
    more of it, such as the paper's value)."""
    return knob(20, help_text, min=1, max=200, **metadata)


def win_rule_knob(help_text: str) -> Any:
    """The `win_rule` field of the jobs that play games (games.rules): the paper's by default."""
    return knob("reference", help_text, choices=WIN_RULES)


def lockstep_batch_knob(default: int) -> Any:
    """The `batch_size` of the jobs that play games in lock-step."""
    return knob(default, "games played in lock-step", min=1, max=4096)


PAPER_QUESTION_TOKENS = 50  # the reference's data.max_response_length: the tokens of one question


def question_tokens_knob(
    help_text: str, high: int, default: int = PAPER_QUESTION_TOKENS, **metadata: Any
) -> Any:
    """The most tokens of a sampled question: the paper's 50 unless `default`, at most `high`."""
    return knob(default, help_text, min=1, max=high, **metadata)


def temperature_knob(help_text: str, high: float, **metadata: Any) -> Any:
    """A sampling temperature: 1 by default, in (0, `high`]."""
    return knob(1.0, help_text, min=0, max=high, min_open=True, **metadata)


def check_limit_words(config: Any) -> None:
    check_between(config, "limit_words", message="limit_words must be 0 (all) or positive")


def check_guesser_prompt(value: str) -> None:
    _check(
        value in GUESSER_PROMPT_CHOICES,
        f"guesser_prompt must be one of {', '.join(repr(c) for c in GUESSER_PROMPT_CHOICES)}",
    )


def new_defaults(**defaults: Any):
    """A class decorator (placed under @dataclass) for a config that only changes the defaults of
    inherited fields: each keeps its type, position, help and choices from the base class."""

    def decorate(cls: type) -> type:
        inherited = {
            f.name: f for f in dataclasses.fields(cls)
        }  # cls is not a dataclass yet: its bases'
        annotations = dict(cls.__dict__.get("__annotations__", {}))
        for name, value in defaults.items():
            if name not in inherited:
                raise TypeError(
                    f"{cls.__name__}: no inherited field {name!r} to give a new default"
                )
            annotations[name] = inherited[name].type
            setattr(cls, name, field(default=value, metadata=inherited[name].metadata))
        cls.__annotations__ = annotations
        return cls

    return decorate


LORA_FIELDS = {  # name: (default, help) of the LoRA knobs every trainer of a model has
    "lora": (False, "train a LoRA adapter (peft) instead of every weight"),
    "lora_rank": (16, "LoRA rank r"),
    "lora_alpha": (32, "LoRA scaling α"),
    "lora_dropout": (
        0.0,
        "dropout on the LoRA path; 0 = the paper's (verl sets none) and no mask work, a "
        "sixth to a quarter of a SmolLM2 LoRA step on a CPU (issue 43)",
    ),
    "lora_target_modules": (
        "all-linear",
        "modules that get adapters: all-linear or comma-separated names (q_proj,v_proj)",
    ),
}


LORA_BOUNDS = {  # read by check_lora and the launch forms' number inputs
    "lora_rank": {"min": 1, "max": 1024},
    "lora_alpha": {"min": 1},
    "lora_dropout": UNIT_FRACTION,
}


def lora_field(name: str, default: Any = None, **metadata: Any) -> Any:
    """The dataclass field of the LoRA knob `name` with its help and bounds (and `default` if
    given; `metadata`: more of it, such as the paper's value)."""
    shared_default, help_text = LORA_FIELDS[name]
    return field(
        default=shared_default if default is None else default,
        metadata={"help": help_text, **LORA_BOUNDS.get(name, {}), **metadata},
    )


class LoraSettings:
    """The checks and parsed target modules of a config that declares the lora_* fields with
    lora_field (a plain mixin: it adds no fields, so each config keeps its own field order)."""

    def check_lora(self) -> None:
        ranks = (
            f"lora_rank must be {bounds_text(self, 'lora_rank')}, "
            f"lora_alpha {bounds_text(self, 'lora_alpha')}"
        )
        for name in ("lora_rank", "lora_alpha"):
            check_between(self, name, message=ranks)
        check_interval(self, "lora_dropout")
        modules = self.target_modules  # "all-linear" alone, else names (not just commas)
        _check(
            modules == "all-linear" or (bool(modules) and "all-linear" not in modules),
            "lora_target_modules: all-linear or module names",
            "lora_target_modules",
        )

    @property
    def target_modules(self) -> str | list[str]:
        names = [m.strip() for m in self.lora_target_modules.split(",") if m.strip()]
        return "all-linear" if names == ["all-linear"] else names


@dataclass(frozen=True)
class TrainConfig(LoraSettings):
    base_model: str = base_model_knob("the model")
    epochs: float = knob(2.0, "passes over the training data", min=0, max=1000, min_open=True)
    max_steps: int = knob(0, "stop after this many optimizer steps (0 = run every epoch)", min=0)
    learning_rate: float = knob(1e-5, "peak learning rate (AdamW)", **OPEN_UNIT_INTERVAL)
    lr_scheduler: str = knob("cosine", "learning-rate schedule after warm-up", choices=SCHEDULERS)
    warmup_ratio: float = knob(0.1, "fraction of the steps spent warming up", **UNIT_FRACTION)
    weight_decay: float = knob(0.01, "AdamW weight decay", **UNIT_FRACTION)
    adam_beta1: float = knob(0.9, "AdamW β1", **UNIT_FRACTION)
    adam_beta2: float = knob(0.95, "AdamW β2", **UNIT_FRACTION)
    max_grad_norm: float = knob(1.0, "gradient clipping norm (0 = no clipping)", min=0)
    global_batch_size: int = knob(
        256,
        (
            "examples (sequences; DPO: preference pairs) "
            "per optimizer step: per-device batch × gradient accumulation × devices"
        ),
    )
    per_device_batch_size: int = knob(
        8,
        ("examples per forward pass on one device (gradient accumulation makes up the rest)"),
        min=1,
        max=4096,
    )
    max_tokens: int = knob(
        650,
        "longest training sequence in tokens; longer examples are dropped (never cut)",
        min=16,
        max=1 << 17,
    )
    lora: bool = lora_field("lora", False)
    lora_rank: int = lora_field("lora_rank")
    lora_alpha: int = lora_field("lora_alpha")
    lora_dropout: float = lora_field("lora_dropout", paper=0.0)
    lora_target_modules: str = lora_field("lora_target_modules")
    precision: str = precision_knob()
    gradient_checkpointing: bool = knob(
        False, "recompute activations in the backward pass (less memory, ~20% slower)"
    )
    save_steps: int = knob(
        0,
        (
            "save a checkpoint every N optimizer steps "
            "(0 = only the last); the last step is always saved"
        ),
        min=0,
    )
    cpu_threads: int = knob(
        0, "torch threads when training on a CPU (0 = every core)", min=0, max=1024
    )
    seed: int = knob(0, "seed of the data order, initialisation and sampling")

    def __post_init__(self) -> None:
        check_named(self, "base_model", "the model to start from")
        check_interval(self, "epochs")
        check_between(self, "max_steps", message="max_steps must be 0 (all epochs) or positive")
        check_adamw(self)
        check_choice(self, "lr_scheduler", SCHEDULERS)
        check_interval(self, "warmup_ratio")
        check_between(self, "per_device_batch_size")
        _check(
            self.per_device_batch_size <= self.global_batch_size <= 1 << 20,
            "global_batch_size must be at least per_device_batch_size",
        )
        _check(
            self.global_batch_size % self.per_device_batch_size == 0,
            "global_batch_size must be a multiple of per_device_batch_size",
        )
        check_between(self, "max_tokens")
        self.check_lora()
        check_precision(self)
        check_between(
            self, "save_steps", message="save_steps must be 0 (only the last step) or positive"
        )
        check_between(self, "cpu_threads")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GameDataConfig(TrainConfig):
    source: str = knob(
        "teacher",
        "teacher: play the teacher against the judge on the words; games: stored games",
        choices=SOURCES,
    )
    teacher: str = guesser_knob(
        "source=teacher: the guesser that plays "
        "(a model spec name; on the command line a games spec)"
    )
    judge: str = judge_knob("the judge of the teacher's games (and of DPO's rewards)")
    word_list: str = word_list_knob(
        "dbrl/train_sft", "secrets to play or to select stored games by"
    )
    split: str = split_knob("only words of this split of the word list (empty = all)")
    pool_word_list: str = knob(
        "dbrl/solved_train",
        (
            "candidate words of an infogain/random teacher and of the information-gain reward "
            "(their names appear in the games trained on; the default holds no word of "
            "paper_test, paper_val, test or val; empty = every knowledge-base noun)"
        ),
    )
    teacher_samples: int = knob(1, "teacher games per word (different seeds)", min=1, max=64)
    max_turns: int = max_turns_knob("questions per game (also stated in the guesser's prompt)")
    games_guesser: str = knob(
        "", "source=games: only games of this guesser model spec (empty = any)"
    )
    games_job: int = knob(0, "source=games: only games stored by this job (0 = any)", min=0)
    games_file: str = knob(
        "",
        (
            "source=games on the command line: "
            "a JSONL file of trajectories (games export or Trajectory.to_dict)"
        ),
    )
    selection: str = knob(
        "fastest",
        (
            "fastest: each word's shortest won games "
            "(ties kept); won: every won game; all: every game"
        ),
        choices=SELECTIONS,
    )
    limit_words: int = limit_words_knob()

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self, "source")  # the field's choices: a kind may offer more (sft: reference)
        _check(
            self.source != "teacher" or bool(self.teacher.strip()),
            "teacher: name the teacher guesser",
        )
        check_named(self, "judge", "a judge")
        _check(
            self.source != "teacher" or bool(self.word_list.strip()),
            "word_list: name the words to play",
        )
        check_split(self)
        check_between(self, "teacher_samples")
        check_between(self, "max_turns")
        check_between(self, "games_job", message="games_job must be 0 (any) or a job id")
        check_choice(self, "selection", SELECTIONS)
        check_limit_words(self)
