"""The `judge` job: train the learned judge (games.judges.learned) on a reference judge's
answers."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from training.common.config import _check, check_between, check_choice, knob

DATASETS = ("reference", "gold", "reference+gold", "games", "reference+games", "file")
INITS = ("random", "kb-svd")


@dataclass(frozen=True)
class LearnedJudgeJobConfig:
    dataset: str = knob(
        "reference",
        (
            "what it learns from: reference (the paper's LLM judge's answers, shipped), "
            "gold (the labelling app's adjudicated answers), games (stored games' yes/no verdicts "
            "of `games_judge`), a combination, or file (`data_path`)"
        ),
        choices=DATASETS,
    )
    data_path: str = knob(
        "",
        (
            "a Parquet or JSONL file with the columns secret, question, yes_votes, "
            "no_votes (dataset=file)"
        ),
    )
    games_judge: str = knob(
        "",
        (
            "dataset=games: the judge (model spec name) whose verdicts on stored games "
            "are the answers"
        ),
    )
    extra_weight: float = knob(
        5.0,
        "weight of a gold or games row relative to a reference row in the loss",
        min=0.0,
        max=100.0,
        min_open=True,
    )
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
    val_percent: int = knob(
        10, "secrets held out for validation, by a hash of the secret (never by row)"
    )
    test_percent: int = knob(
        10, ("secrets held out for the test, by a hash of the secret; reported once at the end")
    )
    cpu_threads: int = knob(2, "torch threads (0 = every core)", min=0, max=256)
    seed: int = knob(0, "seed of the initialisation and the row order")

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
        check_between(self, "extra_weight", message="extra_weight must be in (0, 100]")
        check_between(self, "dim", message="dim must be between 4 and 512")
        check_between(self, "hidden", message="hidden must be between 4 and 2048")
        check_between(self, "epochs", message="epochs must be between 1 and 100")
        check_between(self, "batch_size", message="batch_size must be between 8 and 65536")
        check_between(self, "learning_rate", message="learning_rate must be in (0, 1)")
        check_between(self, "weight_decay", message="weight_decay must be in [0, 1)")
        check_choice(self, "init")
        check_between(self, "min_count", message="min_count must be between 1 and 1000")
        _check(
            0 <= self.val_percent <= 50
            and 0 <= self.test_percent <= 50
            and self.val_percent + self.test_percent <= 60,
            "val_percent and test_percent: 0-50 each, 60 at most",
        )
        check_between(self, "cpu_threads", message="cpu_threads must be between 0 and 256")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
