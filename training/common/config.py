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

SCHEDULERS = ("cosine", "linear", "constant", "constant_with_warmup")
PRECISIONS = ("auto", "bf16", "fp16", "fp32")
SOURCES = ("teacher", "games")
SELECTIONS = ("fastest", "won", "all")
SPLITS = ("", "sft", "rl", "val", "test")
GUESSER_PROMPT_CHOICES = (
    "",
    "paper",
    "short",
)  # "": as the base model was trained (games.llm.chat)


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def check_between(config: Any, name: str, low: float, high: float) -> None:
    """The field `name` of `config` lies in [low, high], else a ValueError saying so."""
    _check(low <= getattr(config, name) <= high, f"{name} must be between {low} and {high}")


def check_choice(config: Any, name: str, choices: tuple[str, ...]) -> None:
    """The field `name` of `config` is one of `choices`, else a ValueError listing them."""
    _check(getattr(config, name) in choices, f"{name} must be one of {', '.join(choices)}")


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


@dataclass(frozen=True)
class TrainConfig:
    base_model: str = field(
        default="tiny-llama",
        metadata={
            "help": "the model to start from: a model spec name "
            "(web) or a model folder / hub id (command line)"
        },
    )
    epochs: float = field(default=2.0, metadata={"help": "passes over the training data"})
    max_steps: int = field(
        default=0, metadata={"help": "stop after this many optimizer steps (0 = run every epoch)"}
    )
    learning_rate: float = field(default=1e-5, metadata={"help": "peak learning rate (AdamW)"})
    lr_scheduler: str = field(
        default="cosine",
        metadata={"help": "learning-rate schedule after warm-up", "choices": SCHEDULERS},
    )
    warmup_ratio: float = field(
        default=0.1, metadata={"help": "fraction of the steps spent warming up"}
    )
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay"})
    adam_beta1: float = field(default=0.9, metadata={"help": "AdamW β1"})
    adam_beta2: float = field(default=0.95, metadata={"help": "AdamW β2"})
    max_grad_norm: float = field(
        default=1.0, metadata={"help": "gradient clipping norm (0 = no clipping)"}
    )
    global_batch_size: int = field(
        default=256,
        metadata={
            "help": "examples (sequences; DPO: preference pairs) "
            "per optimizer step: per-device batch × gradient accumulation × devices"
        },
    )
    per_device_batch_size: int = field(
        default=8,
        metadata={
            "help": "examples per forward pass on one device "
            "(gradient accumulation makes up the rest)"
        },
    )
    max_tokens: int = field(
        default=650,
        metadata={
            "help": "longest training sequence in tokens; longer examples are dropped (never cut)"
        },
    )
    lora: bool = field(
        default=False, metadata={"help": "train a LoRA adapter (peft) instead of every weight"}
    )
    lora_rank: int = field(default=16, metadata={"help": "LoRA rank r"})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling α"})
    lora_dropout: float = field(default=0.05, metadata={"help": "dropout on the LoRA path"})
    lora_target_modules: str = field(
        default="all-linear",
        metadata={
            "help": "modules that get adapters: all-linear or comma-separated names (q_proj,v_proj)"
        },
    )
    precision: str = field(
        default="auto",
        metadata={"help": "auto = bf16 on a bf16-capable GPU, else fp32", "choices": PRECISIONS},
    )
    gradient_checkpointing: bool = field(
        default=False,
        metadata={"help": "recompute activations in the backward pass (less memory, ~20% slower)"},
    )
    save_steps: int = field(
        default=0,
        metadata={
            "help": "save a checkpoint every N optimizer steps "
            "(0 = only the last); the last step is always saved"
        },
    )
    cpu_threads: int = field(
        default=0, metadata={"help": "torch threads when training on a CPU (0 = every core)"}
    )
    seed: int = field(
        default=0, metadata={"help": "seed of the data order, initialisation and sampling"}
    )

    def __post_init__(self) -> None:
        _check(bool(self.base_model.strip()), "base_model: name the model to start from")
        _check(0 < self.epochs <= 1000, "epochs must be in (0, 1000]")
        _check(self.max_steps >= 0, "max_steps must be 0 (all epochs) or positive")
        _check(0 < self.learning_rate < 1, "learning_rate must be in (0, 1)")
        check_choice(self, "lr_scheduler", SCHEDULERS)
        _check(0 <= self.warmup_ratio < 1, "warmup_ratio must be in [0, 1)")
        _check(0 <= self.weight_decay < 1, "weight_decay must be in [0, 1)")
        _check(
            0 <= self.adam_beta1 < 1 and 0 <= self.adam_beta2 < 1,
            "adam_beta1 and adam_beta2 must be in [0, 1)",
        )
        _check(self.max_grad_norm >= 0, "max_grad_norm must be >= 0")
        check_between(self, "per_device_batch_size", 1, 4096)
        _check(
            self.per_device_batch_size <= self.global_batch_size <= 1 << 20,
            "global_batch_size must be at least per_device_batch_size",
        )
        _check(
            self.global_batch_size % self.per_device_batch_size == 0,
            "global_batch_size must be a multiple of per_device_batch_size",
        )
        check_between(self, "max_tokens", 16, 1 << 17)
        _check(
            1 <= self.lora_rank <= 1024 and self.lora_alpha >= 1,
            "lora_rank must be in [1, 1024], lora_alpha >= 1",
        )
        _check(0 <= self.lora_dropout < 1, "lora_dropout must be in [0, 1)")
        _check(
            bool(self.lora_target_modules.strip()),
            "lora_target_modules: all-linear or module names",
        )
        check_choice(self, "precision", PRECISIONS)
        _check(self.save_steps >= 0, "save_steps must be 0 (only the last step) or positive")
        check_between(self, "cpu_threads", 0, 1024)

    @property
    def target_modules(self) -> str | list[str]:
        names = [m.strip() for m in self.lora_target_modules.split(",") if m.strip()]
        return "all-linear" if names == ["all-linear"] else names

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GameDataConfig(TrainConfig):
    source: str = field(
        default="teacher",
        metadata={
            "help": "teacher: play the teacher against the judge on the words; games: stored games",
            "choices": SOURCES,
        },
    )
    teacher: str = field(
        default="infogain",
        metadata={
            "help": "source=teacher: the guesser that plays "
            "(a model spec name; on the command line a games spec)"
        },
    )
    judge: str = field(
        default="kb", metadata={"help": "the judge of the teacher's games (and of DPO's rewards)"}
    )
    word_list: str = field(
        default="dbrl/train_sft",
        metadata={
            "help": "secrets to play or to select stored games by "
            "(a word list name, or a file on the command line)"
        },
    )
    split: str = field(
        default="",
        metadata={
            "help": "only words of this split of the word list (empty = all)",
            "choices": SPLITS,
        },
    )
    pool_word_list: str = field(
        default="dbrl/solved",
        metadata={
            "help": "candidate words of an infogain/random teacher and of "
            "the information-gain reward (empty = every knowledge-base noun)"
        },
    )
    teacher_samples: int = field(
        default=1, metadata={"help": "teacher games per word (different seeds)"}
    )
    max_turns: int = field(
        default=20, metadata={"help": "questions per game (also stated in the guesser's prompt)"}
    )
    games_guesser: str = field(
        default="",
        metadata={"help": "source=games: only games of this guesser model spec (empty = any)"},
    )
    games_job: int = field(
        default=0, metadata={"help": "source=games: only games stored by this job (0 = any)"}
    )
    games_file: str = field(
        default="",
        metadata={
            "help": "source=games on the command line: "
            "a JSONL file of trajectories (games export or Trajectory.to_dict)"
        },
    )
    selection: str = field(
        default="fastest",
        metadata={
            "help": "fastest: each word's shortest won games "
            "(ties kept); won: every won game; all: every game",
            "choices": SELECTIONS,
        },
    )
    limit_words: int = field(default=0, metadata={"help": "only the first N words (0 = all)"})

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self, "source", SOURCES)
        _check(
            self.source != "teacher" or bool(self.teacher.strip()),
            "teacher: name the teacher guesser",
        )
        _check(bool(self.judge.strip()), "judge: name a judge")
        _check(
            self.source != "teacher" or bool(self.word_list.strip()),
            "word_list: name the words to play",
        )
        _check(self.split in SPLITS, f"split must be one of {', '.join(repr(s) for s in SPLITS)}")
        check_between(self, "teacher_samples", 1, 64)
        check_between(self, "max_turns", 1, 200)
        _check(self.games_job >= 0, "games_job must be 0 (any) or a job id")
        check_choice(self, "selection", SELECTIONS)
        _check(self.limit_words >= 0, "limit_words must be 0 (all) or positive")
