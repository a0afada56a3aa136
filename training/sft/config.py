"""The turn-level SFT job's config (defaults: ΔBelief-RL's SFT recipe)."""

from __future__ import annotations

from dataclasses import dataclass

from training.common.config import (
    GameDataConfig,
    check_between,
    check_guesser_prompt,
    guesser_prompt_field,
    knob,
)


@dataclass(frozen=True)
class SFTJobConfig(GameDataConfig):
    """Every GameDataConfig/TrainConfig field: 2 epochs, cosine, peak LR 1e-5, 10% warm-up, AdamW
    (weight decay 0.01, β 0.9/0.95), global batch 256, 650 tokens; the teacher's fastest won game
    per word (ties kept); only the question of each turn is trained."""

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

    def __post_init__(self) -> None:
        super().__post_init__()
        check_guesser_prompt(self.guesser_prompt)
        check_between(self, "recovery_per_game")
        if self.recovery_per_game and self.source != "teacher":
            raise ValueError(
                "recovery_per_game needs source=teacher (the teacher labels the recovery)"
            )
