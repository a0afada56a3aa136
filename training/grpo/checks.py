"""The checks of a GRPO config, section by section (GRPOConfig.__post_init__ runs `check_config`).
They run in a fixed order, so the first error is stable; bounds are the fields' metadata."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from games.types import WIN_RULES
from training.common.config import (
    _check,
    check_adamw,
    check_between,
    check_choice,
    check_guesser_prompt,
    check_interval,
    check_limit_words,
    check_named,
    check_precision,
    check_split,
)
from training.common.held_out import check_held_out
from training.grpo.choices import (
    ADVANTAGES,
    LOSS_AGG_MODES,
    PENALTY_AT,
    ROLLOUT_BACKENDS,
    SCALE_REWARDS,
    TURN_NORMALISATIONS,
    VAL_SAMPLINGS,
    is_http_url,
)

if TYPE_CHECKING:
    from training.grpo.config import GRPOConfig


def check_config(config: GRPOConfig) -> None:
    """Every check, in order: a direct build raises the first failure, build_checked all."""
    for check in (
        check_inputs,
        check_rollouts,
        check_rewards,
        check_loss,
        check_optimisation,
        check_model,
        check_monitoring,
        check_validation,
    ):
        check(config)


def check_inputs(config: GRPOConfig) -> None:
    """What to train, on what."""
    check_named(config, "base_model", "the policy to start from")
    check_named(config, "judge", "a judge")
    check_named(config, "word_list", "the training secrets")
    check_split(config)
    check_limit_words(config)


def check_rollouts(config: GRPOConfig) -> None:
    """How the games are played and sampled."""
    check_between(config, "steps")
    check_between(config, "secrets_per_step")
    check_between(config, "num_generations", why="a group needs two")
    check_between(config, "max_turns")
    check_guesser_prompt(config.guesser_prompt)
    check_choice(config, "win_rule", WIN_RULES)
    check_interval(config, "temperature", why="GRPO samples; greedy has no ratio")
    check_between(config, "max_completion_length")


def check_rewards(config: GRPOConfig) -> None:
    """The advantage, the reward terms and the StarPO-S filter."""
    check_choice(config, "advantage", ADVANTAGES)
    check_interval(config, "belief_coef")
    check_interval(config, "infogain_coef")
    _check(
        not config.pool_word_list
        or config.infogain_coef > 0
        or (config.belief_coef > 0 and config.belief_diagnostic),
        "pool_word_list is the candidates of the information-gain reward and of the "
        "belief diagnostic: set infogain_coef > 0, or belief_coef > 0 with "
        "belief_diagnostic, to use it",
    )
    rewards = (
        config.win_reward,
        config.turn_penalty,
        config.invalid_penalty,
        config.repeated_penalty,
        config.unknown_penalty,
    )
    _check(all(math.isfinite(v) for v in rewards), "rewards must be finite numbers")
    check_choice(config, "scale_rewards", SCALE_REWARDS)
    check_interval(config, "rollout_filter_ratio")


def check_loss(config: GRPOConfig) -> None:
    """The clipped objective, its KL term and aggregation, and how turns share credit."""
    for name in ("epsilon", "epsilon_high", "log_ratio_clamp"):
        check_interval(config, name)
    _check(
        config.clip_ratio_c == 0 or 1 < config.clip_ratio_c <= 100,
        "clip_ratio_c must be 0 (no dual clip) or in (1, 100]",
        "clip_ratio_c",
    )
    check_interval(config, "beta")
    _check(
        config.loss_agg_mode in ("", *LOSS_AGG_MODES),
        f"loss_agg_mode must be empty (the paper's) or one of {', '.join(LOSS_AGG_MODES)}",
    )
    check_choice(config, "turn_penalty_at", PENALTY_AT)
    _check(
        config.turn_normalisation in TURN_NORMALISATIONS,
        f"turn_normalisation must be one of {', '.join(TURN_NORMALISATIONS)}",
    )


def check_optimisation(config: GRPOConfig) -> None:
    """AdamW, the passes and the mini-batches."""
    check_adamw(
        config,
        learning_rate_message="learning_rate must be 0 (the paper's for the advantage) "
        "or in (0, 1)",
    )
    check_between(config, "num_iterations")
    check_between(config, "mini_batches")
    check_between(config, "forward_batch_size")


def check_model(config: GRPOConfig) -> None:
    """LoRA, the rollout backend, precision and threads."""
    config.check_lora()
    _check(
        config.rollout_backend in ROLLOUT_BACKENDS,
        f"rollout_backend must be one of {', '.join(ROLLOUT_BACKENDS)}",
    )
    _check(
        config.rollout_backend not in ("vllm", "server") or config.lora,
        f"rollout_backend={config.rollout_backend} needs lora=true "
        "(the adapter is what is synced to vLLM each step)",
    )
    _check(
        config.rollout_backend != "server" or is_http_url(config.rollout_server),
        "rollout_backend=server needs rollout_server, the generation server's "
        f"http(s)://host:port URL (got {config.rollout_server!r})",
        "rollout_server",
    )
    _check(
        config.rollout_backend == "server" or not config.rollout_server,
        "rollout_server is the generation server of rollout_backend=server; "
        f"rollout_backend is {config.rollout_backend}",
        "rollout_server",
    )
    check_interval(config, "vllm_gpu_memory_utilization")
    check_precision(config)
    check_between(config, "cpu_threads")


def check_monitoring(config: GRPOConfig) -> None:
    """Checkpoints and the collapse warnings."""
    check_interval(config, "save_steps")
    check_between(config, "warn_window")
    check_interval(config, "warn_drop_fraction")
    check_interval(config, "warn_grad_norm_factor")


def check_validation(config: GRPOConfig) -> None:
    """The validation games."""
    check_between(
        config,
        "val_secrets",
        message="val_secrets must be -1 (every word), 0 (no validation) or up to 4096",
    )
    check_between(config, "val_games")
    check_split(config, "val_split")
    _check(
        not config.val_split or bool(config.val_word_list.strip()),
        "val_split needs a val_word_list",
    )
    check_interval(config, "val_steps")
    check_choice(config, "val_sampling", VAL_SAMPLINGS)
    check_interval(config, "warn_val_drop")
    if config.val_secrets:
        _check(
            bool(config.val_word_list.strip()) or config.allow_val_overlap,
            "val_word_list is empty: validation would play the training secrets "
            "(set allow_val_overlap to validate on them)",
            "val_word_list",
        )
        check_held_out(
            config, ("word_list", "split"), ("val_word_list", "val_split"), "allow_val_overlap"
        )
