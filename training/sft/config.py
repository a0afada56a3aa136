"""The turn-level SFT job's config (defaults: ΔBelief-RL's SFT recipe) and its named settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from training.common.config import (
    SOURCES,
    GameDataConfig,
    _check,
    check_between,
    check_guesser_prompt,
    guesser_prompt_field,
    knob,
)
from training.common.presets import Presets

SFT_SOURCES = (*SOURCES, "reference")
REFERENCE_MAX_TURNS = 20  # the paper's games allowed 20 questions (training.sft.reference_data)

# Named settings the command line (`--preset NAME`) and the launch form (`?preset=NAME`) start
# from; every field not named keeps its default, and any field can still be changed.
SFT_PRESETS: dict[str, dict[str, Any]] = {
    # SmolLM2-135M-Instruct + LoRA on the paper's SFT turns (games/data/reference-sft) with the
    # paper's prompt, turn-level, only the question (and its end-of-turn token) trained; the
    # paper's recipe otherwise (2 epochs, cosine, global batch 256, 650 tokens), with LoRA's
    # usual 10x the paper's full-weight learning rate.
    "smol-20q-sft": {
        "base_model": "smollm2-135m-instruct",
        "source": "reference",
        "guesser_prompt": "paper",
        "lora": True,
        "lora_rank": 16,
        "lora_alpha": 32,
        "learning_rate": 1e-4,
    },
}


@dataclass(frozen=True)
class SFTJobConfig(Presets, GameDataConfig):
    """Every GameDataConfig/TrainConfig field: 2 epochs, cosine, peak LR 1e-5, 10% warm-up, AdamW
    (weight decay 0.01, β 0.9/0.95), global batch 256, 650 tokens; the teacher's fastest won game
    per word (ties kept); only the question of each turn is trained. source=reference trains on
    the paper's own SFT turns (training.sft.reference_data)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = SFT_PRESETS
    PRESET_KIND: ClassVar[str] = "SFT"

    source: str = knob(
        "teacher",
        (
            "teacher: play the teacher against the judge on the words; games: stored games; "
            "reference: the ΔBelief-RL paper's SFT turns (games/data/reference-sft; "
            "teacher, judge, word lists and selection unused)"
        ),
        choices=SFT_SOURCES,
    )
    limit_words: int = knob(
        0,
        (
            "only N words (0 = all): the first N of the word list; "
            "source=reference: N secrets drawn with the seed, all their turns"
        ),
        min=0,
    )
    recovery_per_game: int = knob(
        0,
        (
            "source=teacher: DAgger-style rows per game — "
            "the game cut at a random turn, 1–2 wrong guesses appended (answered No), "
            "the teacher's next question trained (0 = none)"
        ),
        min=0,
        max=16,
    )
    guesser_prompt: str = guesser_prompt_field()
    reference_file: str = knob(
        "",
        (
            "source=reference: the parquet of the paper's SFT turns "
            "(empty = the shipped gem_lta_sft_qwen3_1.7b_st.parquet; a path on the worker)"
        ),
    )
    max_turn_examples: int = knob(
        0,
        (
            "source=reference: train on N turns drawn with the seed "
            "(after limit_words; 0 = every turn, the paper's)"
        ),
        min=0,
    )
    skip_repeat_targets: bool = knob(
        False,
        (
            "source=reference: leave out the rows whose question was already asked in their "
            "game (1.9% of the paper's rows; a third of those that follow a 'repeated' answer "
            "ask it again), before max_turn_examples draws (off = every row, the paper's)"
        ),
    )

    shared_prefix: bool = knob(
        True,
        (
            "encode each micro-batch's common prompt (the guesser's system prompt) once and "
            "share its KV cache across the rows: the same loss and gradients, ~half the tokens "
            "of the paper's rows (training.sft.prefix; the paper encodes every row whole)"
        ),
    )
    pack_games: bool = knob(
        False,
        (
            "train each game as one sequence, every question of it trained (training.sft."
            "packing; the same per-token loss, one row per game, so a step of global_batch_size "
            "rows holds ~questions-per-game× more questions); off: one row per question, the "
            "paper's"
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_guesser_prompt(self.guesser_prompt)
        check_between(self, "recovery_per_game")
        if self.recovery_per_game and self.source != "teacher":
            raise ValueError(
                "recovery_per_game needs source=teacher (the teacher labels the recovery)"
            )
        check_between(
            self, "max_turn_examples", message="max_turn_examples must be 0 (all) or positive"
        )
        reference = self.source == "reference"
        _check(
            reference or not self.reference_file.strip(),
            "reference_file needs source=reference",
            "reference_file",
        )
        _check(
            reference or not self.skip_repeat_targets,
            "skip_repeat_targets needs source=reference",
            "skip_repeat_targets",
        )
        _check(
            reference or not self.max_turn_examples,
            "max_turn_examples needs source=reference (other sources: limit_words)",
            "max_turn_examples",
        )
        _check(
            not reference or self.max_turns >= REFERENCE_MAX_TURNS,
            f"source=reference: the paper's games allow {REFERENCE_MAX_TURNS} questions "
            f"(their turns go up to the 19th), so max_turns must be at least {REFERENCE_MAX_TURNS}",
            "max_turns",
        )
