"""The turn-level SFT job's config (defaults: ΔBelief-RL's SFT recipe)."""

from __future__ import annotations

from dataclasses import dataclass

from training.common.config import GameDataConfig


@dataclass(frozen=True)
class SFTJobConfig(GameDataConfig):
    """Every GameDataConfig/TrainConfig field: 2 epochs, cosine, peak LR 1e-5, 10% warm-up, AdamW
    (weight decay 0.01, β 0.9/0.95), global batch 256, 650 tokens; the teacher's fastest won game
    per word (ties kept); only the question of each turn is trained."""
