"""The `judge` job: train the learned judge (games.judges.learned) on a reference judge's
answers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from training.common.config import _check

DATASETS = ("reference", "gold", "reference+gold", "games", "reference+games", "file")


@dataclass(frozen=True)
class LearnedJudgeJobConfig:
    dataset: str = field(
        default="reference",
        metadata={
            "help": "what it learns from: reference (the paper's LLM judge's answers, shipped), "
            "gold (the labelling app's adjudicated answers), games (stored games' yes/no verdicts "
            "of `games_judge`), a combination, or file (`data_path`)",
            "choices": DATASETS,
        },
    )
    data_path: str = field(
        default="",
        metadata={
            "help": "a Parquet or JSONL file with the columns secret, question, yes_votes, "
            "no_votes (dataset=file)"
        },
    )
    games_judge: str = field(
        default="",
        metadata={
            "help": "dataset=games: the judge (model spec name) whose verdicts on stored games "
            "are the answers"
        },
    )
    extra_weight: float = field(
        default=5.0,
        metadata={"help": "weight of a gold or games row relative to a reference row in the loss"},
    )
    dim: int = field(default=64, metadata={"help": "embedding size of question and secret tokens"})
    hidden: int = field(default=128, metadata={"help": "width of the two hidden layers"})
    epochs: int = field(default=5, metadata={"help": "passes over the training rows"})
    batch_size: int = field(default=512, metadata={"help": "rows per optimizer step"})
    learning_rate: float = field(
        default=2e-3, metadata={"help": "peak learning rate (AdamW, one-cycle schedule)"}
    )
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    min_count: int = field(
        default=4,
        metadata={
            "help": "a token is learned when this many training rows (question tokens) or "
            "training secrets (secret tokens) have it"
        },
    )
    val_percent: int = field(
        default=10,
        metadata={
            "help": "secrets held out for validation, by a hash of the secret (never by row)"
        },
    )
    test_percent: int = field(
        default=10,
        metadata={
            "help": "secrets held out for the test, by a hash of the secret; reported once at "
            "the end"
        },
    )
    cpu_threads: int = field(default=2, metadata={"help": "torch threads (0 = every core)"})
    seed: int = field(default=0, metadata={"help": "seed of the initialisation and the row order"})

    def __post_init__(self) -> None:
        _check(self.dataset in DATASETS, f"dataset must be one of {', '.join(DATASETS)}")
        _check(
            self.dataset != "file" or bool(self.data_path.strip()),
            "data_path: dataset=file needs a file",
        )
        _check(
            "games" not in self.dataset or bool(self.games_judge.strip()),
            "games_judge: name the judge whose verdicts on stored games are learned",
        )
        _check(0.0 < self.extra_weight <= 100.0, "extra_weight must be in (0, 100]")
        _check(4 <= self.dim <= 512, "dim must be between 4 and 512")
        _check(4 <= self.hidden <= 2048, "hidden must be between 4 and 2048")
        _check(1 <= self.epochs <= 100, "epochs must be between 1 and 100")
        _check(8 <= self.batch_size <= 65536, "batch_size must be between 8 and 65536")
        _check(0.0 < self.learning_rate < 1.0, "learning_rate must be in (0, 1)")
        _check(0.0 <= self.weight_decay < 1.0, "weight_decay must be in [0, 1)")
        _check(1 <= self.min_count <= 1000, "min_count must be between 1 and 1000")
        _check(
            0 <= self.val_percent <= 50
            and 0 <= self.test_percent <= 50
            and self.val_percent + self.test_percent <= 60,
            "val_percent and test_percent: 0-50 each, 60 at most",
        )
        _check(0 <= self.cpu_threads <= 256, "cpu_threads must be between 0 and 256")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
