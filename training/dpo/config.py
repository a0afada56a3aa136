"""The multi-turn DPO job's config: offline pairs from proxy rewards, TRL's DPOTrainer, LoRA."""

from __future__ import annotations

from dataclasses import dataclass

from training.common.config import (
    SELECTIONS,
    GameDataConfig,
    _check,
    check_between,
    check_choice,
    check_guesser_prompt,
    check_interval,
    guesser_prompt_field,
    knob,
    new_defaults,
    question_tokens_knob,
    temperature_knob,
    word_list_knob,
)
from training.dpo.pairs import REWARDS

LOSS_TYPES = ("sigmoid", "ipo", "hinge", "robust")
RATING_KINDS = (
    "hf",
    "transformers",
    "vllm",
    "openai",
)  # games registry specs of an LLM (games.registry._backend)


@dataclass(frozen=True)
@new_defaults(
    epochs=1.0,
    learning_rate=5e-6,
    global_batch_size=64,
    per_device_batch_size=4,
    lora=True,
    lora_rank=8,
    lora_alpha=16,
)
class DPOJobConfig(GameDataConfig):
    """Histories are prefixes of the selected games (by default every teacher game); the policy
    (the base model) samples `candidates` next questions per history; chosen/rejected = best/worst
    by `reward`. Batches count preference pairs."""

    word_list: str = word_list_knob(
        "dbrl/paper_rl", "secrets of the games whose prefixes are histories"
    )
    selection: str = knob(
        "all",
        "games whose prefixes are histories: fastest, won or all",
        choices=SELECTIONS,
    )
    prefixes_per_game: int = knob(4, "histories drawn from each game (0 = every turn)", min=0)
    candidates: int = knob(4, "N: next questions the policy samples per history", min=2, max=64)
    reward: str = knob(
        "infogain",
        (
            "infogain: bits the KB's consistent candidate set shrinks; belief: "
            "ΔBelief + engine reward; success: mean return of continued games; rating: "
            "a judge model's 1–5 rating of the question (expected digit) + engine reward"
        ),
        choices=REWARDS,
    )
    rating_model: str = knob(
        "",
        (
            "reward=rating: model spec of the rating judge (hf:FOLDER, "
            "vllm:FOLDER or openai:URL#MODEL; the policy's own folder reuses the policy)"
        ),
    )
    min_reward_gap: float = knob(
        0.25, "drop pairs whose best−worst reward gap is smaller (bits for infogain)", min=0
    )
    continuations: int = knob(2, "reward=success: games played on per candidate", min=1, max=64)
    temperature: float = temperature_knob("sampling temperature of the candidates", high=5)
    max_new_tokens: int = question_tokens_knob("longest candidate question in tokens", high=1024)
    beta: float = knob(
        0.1, "DPO β: higher stays closer to the reference model", min=0, min_open=True
    )
    loss_type: str = knob("sigmoid", "TRL DPO loss", choices=LOSS_TYPES)
    guesser_prompt: str = guesser_prompt_field()

    def __post_init__(self) -> None:
        super().__post_init__()
        check_guesser_prompt(self.guesser_prompt)
        check_between(
            self,
            "prefixes_per_game",
            message="prefixes_per_game must be 0 (every turn) or positive",
        )
        check_between(self, "candidates")
        check_choice(self, "reward", REWARDS)
        spec = self.rating_model.strip()
        _check(
            self.reward != "rating" or bool(spec),
            "rating_model: reward=rating needs the model spec of the rating judge (e.g. hf:FOLDER)",
        )
        if spec:
            self.check_rating_model(spec)
        check_interval(self, "min_reward_gap")
        check_between(self, "continuations")
        check_interval(self, "temperature")
        check_between(self, "max_new_tokens")
        check_interval(self, "beta")
        check_choice(self, "loss_type", LOSS_TYPES)

    def check_rating_model(self, spec: str) -> None:
        """A games registry spec KIND:TARGET (the web app, where it is a model-spec name,
        overrides this)."""
        kind, _, target = spec.partition(":")
        _check(
            kind.lower() in RATING_KINDS and bool(target.strip()),
            "rating_model must be a model spec KIND:TARGET with "
            f"KIND one of {', '.join(RATING_KINDS)}, got {spec!r}",
        )
