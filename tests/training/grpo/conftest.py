"""Fixtures for the GRPO tests: a small tiny model built once per session, turn helpers."""

from __future__ import annotations

import pytest

from games.engine import reward_parts
from games.rules import VERDICT_FEEDBACK
from games.types import GameConfig, Outcome, Trajectory, Turn, Verdict


@pytest.fixture(scope="session")
def grpo_tiny_dir(tmp_path_factory):
    from training.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("grpo-tiny") / "model", hidden=32, intermediate=64, seed=0
    )


@pytest.fixture(scope="session")
def grpo_tiny(grpo_tiny_dir):
    """(model, tokenizer) in float32, eval mode (no dropout anyway)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(grpo_tiny_dir)
    model = AutoModelForCausalLM.from_pretrained(grpo_tiny_dir)
    return model.eval(), tokenizer


def make_turn(
    index: int, verdict: Verdict, delta_belief: float | None = None, extra: dict | None = None
) -> Turn:
    """A turn with the engine's own reward parts for its verdict."""
    return Turn(
        index=index,
        question=f"Is it thing {index}?",
        verdict=verdict,
        feedback=VERDICT_FEEDBACK[verdict],
        reward=reward_parts(verdict, GameConfig()),
        delta_belief=delta_belief,
        extra=extra or {},
    )


def make_trajectory(secret: str, turns: list[Turn]) -> Trajectory:
    won = bool(turns) and turns[-1].verdict is Verdict.FINISHED
    return Trajectory(
        secret=secret, seed=0, turns=turns, outcome=Outcome.WON if won else Outcome.LOST
    )
