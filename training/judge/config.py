"""The `judge` job: train a judge on a reference judge's answers (and gold labels, stored games or a
file). Two models: the learned judge (games.judges.learned, a small network over the knowledge
base's facts: LearnedJudgeJobConfig) and the pretrained judge (games.judges.cross_encoder, a
cross-encoder fine-tuned from a pretrained base: PretrainedJudgeJobConfig)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from training.common.config import (
    OPEN_UNIT_INTERVAL,
    UNIT_FRACTION,
    _check,
    check_between,
    check_choice,
    check_interval,
    check_precision,
    knob,
    precision_knob,
)

DATASETS = ("reference", "gold", "reference+gold", "games", "reference+games", "file")
INITS = ("random", "kb-svd")
INPUTS = ("word", "word+gloss")  # games.judges.cross_encoder.INPUTS
COMBINE = ("learned", "none")


# -- what both judges learn from -------------------------------------------------------------------
def dataset_knob() -> Any:
    return knob(
        "reference",
        (
            "what it learns from: reference (the paper's LLM judge's answers, shipped), "
            "gold (the labelling app's adjudicated answers), games (stored games' yes/no verdicts "
            "of `games_judge`), a combination, or file (`data_path`)"
        ),
        choices=DATASETS,
    )


def data_path_knob() -> Any:
    return knob(
        "",
        (
            "a Parquet or JSONL file with the columns secret, question, yes_votes, "
            "no_votes (dataset=file)"
        ),
    )


def games_judge_knob() -> Any:
    return knob(
        "",
        (
            "dataset=games: the judge (model spec name) whose verdicts on stored games "
            "are the answers"
        ),
    )


def extra_weight_knob() -> Any:
    return knob(
        5.0,
        "weight of a gold or games row relative to a reference row in the loss",
        min=0.0,
        max=100.0,
        min_open=True,
    )


def val_percent_knob() -> Any:
    return knob(10, "secrets held out for validation, by a hash of the secret (never by row)")


def test_percent_knob() -> Any:
    return knob(
        10, ("secrets held out for the test, by a hash of the secret; reported once at the end")
    )


def cpu_threads_knob() -> Any:
    return knob(2, "torch threads (0 = every core)", min=0, max=256)


def check_dataset(config: Any) -> None:
    """The checks of the dataset fields and the held-out split both judge configs share."""
    _check(config.dataset in DATASETS, f"dataset must be one of {', '.join(DATASETS)}")
    _check(
        config.dataset != "file" or bool(config.data_path.strip()),
        "data_path: dataset=file needs a file",
    )
    _check(
        "games" not in config.dataset or bool(config.games_judge.strip()),
        "games_judge: name the judge whose verdicts on stored games are learned",
    )
    check_interval(config, "extra_weight")
    _check(
        0 <= config.val_percent <= 50
        and 0 <= config.test_percent <= 50
        and config.val_percent + config.test_percent <= 60,
        "val_percent and test_percent: 0-50 each, 60 at most",
    )
    check_between(config, "cpu_threads")


@dataclass(frozen=True)
class LearnedJudgeJobConfig:
    dataset: str = dataset_knob()
    data_path: str = data_path_knob()
    games_judge: str = games_judge_knob()
    extra_weight: float = extra_weight_knob()
    dim: int = knob(64, "embedding size of question and secret tokens", min=4, max=512)
    hidden: int = knob(128, "width of the two hidden layers", min=4, max=2048)
    epochs: int = knob(5, "passes over the training rows", min=1, max=100)
    batch_size: int = knob(512, "rows per optimizer step", min=8, max=65536)
    learning_rate: float = knob(
        2e-3,
        "peak learning rate (AdamW, one-cycle schedule)",
        min=0.0,
        max=1.0,
        min_open=True,
        max_open=True,
    )
    weight_decay: float = knob(0.0, "AdamW weight decay", min=0.0, max=1.0, max_open=True)
    init: str = knob(
        "random",
        (
            "starting embeddings: random (shipped) or kb-svd (secret tokens from an SVD of the "
            "knowledge base's nouns, held-out secrets left out; question words from the secret "
            "tokens that name them)"
        ),
        choices=INITS,
    )
    min_count: int = knob(
        4,
        (
            "a token is learned when this many training rows (question tokens) or "
            "training secrets (secret tokens) have it"
        ),
        min=1,
        max=1000,
    )
    val_percent: int = val_percent_knob()
    test_percent: int = test_percent_knob()
    cpu_threads: int = cpu_threads_knob()
    # no precision: a 64/128-wide MLP exported to numpy, overhead-bound, trains in float32
    seed: int = knob(0, "seed of the initialisation and the row order")

    def __post_init__(self) -> None:
        check_dataset(self)
        for name in ("dim", "hidden", "epochs", "batch_size"):
            check_between(self, name)
        check_interval(self, "learning_rate")
        check_interval(self, "weight_decay")
        check_choice(self, "init")
        check_between(self, "min_count")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PretrainedJudgeJobConfig:
    """The pretrained judge: a cross-encoder (games.judges.cross_encoder) fine-tuned from
    `base_model` with a LoRA adapter and a one-logit head, on the same rows and held-out split as
    the learned judge. Defaults: the shipped judge's settings (chosen on validation secrets)."""

    dataset: str = dataset_knob()
    data_path: str = data_path_knob()
    games_judge: str = games_judge_knob()
    extra_weight: float = extra_weight_knob()
    base_model: str = knob(
        "minilm-l6",
        "the pretrained encoder to start from: a base model name (games.base_models) or a folder",
    )
    input: str = knob(
        "word",
        (
            "what the secret's side of each pair reads: word, or word+gloss (the word and its "
            "knowledge-base definitions, when the knowledge base knows it)"
        ),
        choices=INPUTS,
    )
    max_rows: int = knob(
        0, "train on at most this many rows, drawn at random (0 = every training row)", min=0
    )
    epochs: float = knob(1.0, "passes over the training rows", min=0, max=100, min_open=True)
    batch_size: int = knob(32, "rows per optimizer step", min=1, max=4096)
    learning_rate: float = knob(5e-4, "peak learning rate (AdamW)", **OPEN_UNIT_INTERVAL)
    warmup_ratio: float = knob(0.06, "fraction of the steps spent warming up", **UNIT_FRACTION)
    weight_decay: float = knob(0.01, "AdamW weight decay", **UNIT_FRACTION)
    lora_rank: int = knob(32, "LoRA rank r of the adapters", min=1, max=384)
    lora_alpha: int = knob(32, "LoRA scaling α", min=1, max=4096)
    max_length: int = knob(
        64, "tokens per pair at most (longer definitions are cut)", min=8, max=512
    )
    combine: str = knob(
        "learned",
        (
            "learned: answer with the cross-encoder's and the shipped learned judge's logits "
            "combined (weights fitted on validation secrets; the learned judge must hold out the "
            "same secrets); none: the cross-encoder alone"
        ),
        choices=COMBINE,
    )
    eval_every: int = knob(
        500, "optimizer steps between validation figures (0 = only at the end)", min=0
    )
    eval_rows: int = knob(
        4000, "validation rows those figures use (0 = all; the end always uses all)", min=0
    )
    val_percent: int = val_percent_knob()
    test_percent: int = test_percent_knob()
    cpu_threads: int = cpu_threads_knob()
    precision: str = precision_knob()
    seed: int = knob(0, "seed of the head, the adapters and the row order")

    def __post_init__(self) -> None:
        check_dataset(self)
        check_precision(self)
        _check(bool(self.base_model.strip()), "base_model: name the encoder to start from")
        check_choice(self, "input")
        check_choice(self, "combine")
        for name in ("max_rows", "eval_every", "eval_rows", "epochs"):
            check_interval(self, name)
        check_between(self, "batch_size")
        for name in ("learning_rate", "warmup_ratio", "weight_decay"):
            check_interval(self, name)
        for name in ("lora_rank", "lora_alpha", "max_length"):
            check_between(self, name)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
