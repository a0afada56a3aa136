"""The GRPO job's config: multi-turn GRPO on 20Q games with StarPO or ΔBelief (CIA) credit.

Names follow TRL's GRPOConfig where it has the knob (`num_generations`, `epsilon`,
`epsilon_high`, `beta`, `num_iterations`, `scale_rewards`, `temperature`,
`max_completion_length`), verl's `loss_agg_mode` and RAGEN's `rollout_filter_ratio`. Importing
this module is cheap (no torch): the web process builds launch forms from it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from games.types import WIN_RULES
from training.common.config import (
    check_between,
    check_choice,
    check_guesser_prompt,
    guesser_prompt_field,
)

ADVANTAGES = ("turn", "trajectory")
LOSS_AGG_MODES = ("token-mean", "seq-mean-token-mean")
PAPER_LOSS_AGG = {
    "turn": "token-mean",
    "trajectory": "seq-mean-token-mean",
}  # the reference's scripts
PENALTY_AT = ("end", "turn")
TURN_NORMALISATIONS = ("padded", "reached")
SCALE_REWARDS = ("group", "none")
ROLLOUT_BACKENDS = ("transformers", "vllm")
PRECISIONS = ("auto", "bf16", "fp32")
SPLITS = ("", "sft", "rl", "val", "test")


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass(frozen=True)
class GRPOConfig:
    # -- what to train, on what ------------------------------------------------------------
    base_model: str = field(
        default="tiny-llama",
        metadata={
            "help": "the policy to start from: a model spec name "
            "(web) or a model folder / hub id (command line)"
        },
    )
    judge: str = field(
        default="kb", metadata={"help": "the judge (environment): a model spec name or games spec"}
    )
    word_list: str = field(
        default="dbrl/train_rl",
        metadata={
            "help": "training secrets: a word list name "
            "(web), a shipped list or a file (command line)"
        },
    )
    split: str = field(
        default="", metadata={"help": "only words of this split (empty = all)", "choices": SPLITS}
    )
    limit_words: int = field(default=0, metadata={"help": "only the first N words (0 = all)"})
    # -- rollouts ------------------------------------------------------------------------------
    steps: int = field(default=100, metadata={"help": "GRPO steps (one batch of rollouts each)"})
    secrets_per_step: int = field(default=8, metadata={"help": "secrets (groups) per step"})
    num_generations: int = field(default=8, metadata={"help": "G: rollouts per secret (the group)"})
    max_turns: int = field(
        default=20, metadata={"help": "questions per game (also stated in the prompt)"}
    )
    win_rule: str = field(
        default="reference",
        metadata={
            "help": "which questions win (games.rules): reference, "
            "the paper's (the secret anywhere in the question, by token, "
            "lemma or stem), or strict (a guess of one thing that is the secret)",
            "choices": WIN_RULES,
        },
    )
    guesser_prompt: str = guesser_prompt_field()
    temperature: float = field(
        default=1.0,
        metadata={"help": "sampling temperature; log-probs in the loss use the same temperature"},
    )
    max_completion_length: int = field(default=32, metadata={"help": "most tokens per question"})
    # -- rewards and advantages ---------------------------------------------------------------
    advantage: str = field(
        default="turn",
        metadata={
            "help": "turn: normalise each turn's r_t over the group's rollouts (ΔBelief/CIA); "
            "trajectory: normalise the return over the group (StarPO)",
            "choices": ADVANTAGES,
        },
    )
    belief_coef: float = field(
        default=0.1,
        metadata={
            "help": "λ in r_t = score_t + r_end + λ·max(ΔBelief_t, 0) (also added to the "
            "trajectory return; 0 = no ΔBelief, no belief scoring; the paper's StarPO runs use 0)"
        },
    )
    turn_penalty_at: str = field(
        default="end",
        metadata={
            "help": "end: turn_penalty × turns is part of r_end, on every turn (the reference); "
            "turn: in each turn's own reward (an ablation: per-turn normalisation cancels it)",
            "choices": PENALTY_AT,
        },
    )
    belief_on_finishing_turn: bool = field(
        default=False,
        metadata={"help": "keep ΔBelief's bonus on the turn that wins (the reference zeroes it)"},
    )
    turn_normalisation: str = field(
        default="padded",
        metadata={
            "help": "advantage=turn: padded normalises turn t over every rollout "
            "of the secret, a game that ended earlier counting 0 (the reference); "
            "reached: over the rollouts that reached t (an ablation)",
            "choices": TURN_NORMALISATIONS,
        },
    )
    infogain_coef: float = field(
        default=0.0,
        metadata={
            "help": "μ: each turn also earns μ × the bits by which the answer narrows "
            "the knowledge base's candidates consistent with the game so far (a win: "
            "every remaining bit; a guess of a word already ruled out: 0); 0 = off"
        },
    )
    pool_word_list: str = field(
        default="",
        metadata={
            "help": "the candidates of the information-gain reward "
            "(the training secrets are added); empty = every knowledge-base noun"
        },
    )
    win_reward: float = field(
        default=2.0, metadata={"help": "r_end of a won game (added to every turn)"}
    )
    turn_penalty: float = field(default=-0.05, metadata={"help": "reward of every turn"})
    invalid_penalty: float = field(default=-5.0, metadata={"help": "reward of an invalid question"})
    repeated_penalty: float = field(
        default=-1.0, metadata={"help": "reward of a repeated question"}
    )
    unknown_penalty: float = field(
        default=0.0,
        metadata={
            "help": "reward of a question the judge cannot ground (the knowledge-base "
            "judge on a concept it does not know); 0 = it costs only its turn"
        },
    )
    scale_rewards: str = field(
        default="group",
        metadata={
            "help": "group: divide by the group's reward std; "
            "none: only subtract the mean (Dr. GRPO)",
            "choices": SCALE_REWARDS,
        },
    )
    rollout_filter_ratio: float = field(
        default=1.0,
        metadata={
            "help": "StarPO-S: keep this top fraction of secret groups by reward std "
            "(1 = keep every group, as the ΔBelief-RL reference does; RAGEN's StarPO-S keeps 0.25)"
        },
    )
    # -- the loss ----------------------------------------------------------------------------------
    epsilon: float = field(
        default=0.2, metadata={"help": "lower clip range ε_low: ratios below 1 − ε are clipped"}
    )
    epsilon_high: float = field(
        default=0.28, metadata={"help": "upper clip range ε_high (clip-higher, DAPO)"}
    )
    beta: float = field(
        default=0.0,
        metadata={
            "help": "KL coefficient to the frozen start model "
            "(k3 estimator); 0 = no KL, no reference model"
        },
    )
    use_bias_correction_kl: bool = field(
        default=False,
        metadata={
            "help": "multiply the KL term by the importance ratio "
            "(TRL's default, DeepSeek-V3.2); false = plain k3"
        },
    )
    loss_agg_mode: str = field(
        default="",
        metadata={
            "help": "token-mean: every trained token weighs the same; "
            "seq-mean-token-mean: mean over each game's tokens, then over games; empty: "
            "the paper's for the advantage (turn: token-mean, trajectory: seq-mean-token-mean)",
            "choices": ("", *LOSS_AGG_MODES),
        },
    )
    num_iterations: int = field(
        default=1, metadata={"help": "μ: passes over each batch of rollouts"}
    )
    mini_batches: int = field(
        default=1, metadata={"help": "optimizer steps per pass (the batch split by game)"}
    )
    forward_batch_size: int = field(
        default=32,
        metadata={
            "help": "sequences per forward/backward (gradient accumulation makes up a mini-batch)"
        },
    )
    learning_rate: float = field(
        default=1e-5,
        metadata={
            "help": "AdamW learning rate (constant; the paper's StarPO run 1e-5, its CIA run 3e-5)"
        },
    )
    adam_beta1: float = field(default=0.9, metadata={"help": "AdamW β1 (the reference: 0.9)"})
    adam_beta2: float = field(default=0.95, metadata={"help": "AdamW β2 (the reference: 0.95)"})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    max_grad_norm: float = field(
        default=1.0, metadata={"help": "gradient clipping norm (0 = none)"}
    )
    # -- model -------------------------------------------------------------------------------------
    lora: bool = field(
        default=True, metadata={"help": "train a LoRA adapter (peft) instead of every weight"}
    )
    lora_rank: int = field(default=16, metadata={"help": "LoRA rank r"})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling α"})
    lora_dropout: float = field(default=0.0, metadata={"help": "dropout on the LoRA path"})
    lora_target_modules: str = field(
        default="all-linear",
        metadata={
            "help": "modules that get adapters: all-linear or comma-separated names (q_proj,v_proj)"
        },
    )
    rollout_backend: str = field(
        default="transformers",
        metadata={
            "help": "transformers: the policy itself generates; vllm: "
            "a vLLM engine with the adapter synced every step (GPU, needs lora)",
            "choices": ROLLOUT_BACKENDS,
        },
    )
    vllm_gpu_memory_utilization: float = field(
        default=0.4, metadata={"help": "vLLM's share of GPU memory"}
    )
    precision: str = field(
        default="auto",
        metadata={"help": "auto = bf16 on a bf16 GPU, else fp32", "choices": PRECISIONS},
    )
    cpu_threads: int = field(
        default=0, metadata={"help": "torch threads on a CPU (0 = every core)"}
    )
    # -- checkpoints and warnings ------------------------------------------------------------------
    save_steps: int = field(
        default=10, metadata={"help": "checkpoint every N steps (the last step always)"}
    )
    warn_window: int = field(
        default=10, metadata={"help": "steps of history the collapse warnings look at"}
    )
    warn_drop_fraction: float = field(
        default=0.25,
        metadata={
            "help": "warn when reward std or entropy falls "
            "below this fraction of its max over the window"
        },
    )
    warn_grad_norm_factor: float = field(
        default=5.0,
        metadata={
            "help": "warn when the grad norm exceeds this multiple of its median over the window"
        },
    )
    # -- validation: a fixed set of secrets played greedily, to see forgetting the rollouts hide ---
    val_secrets: int = field(
        default=0,
        metadata={
            "help": "secrets played greedily (one game each) "
            "before step 1 and every val_steps steps; 0 = no validation"
        },
    )
    val_word_list: str = field(
        default="",
        metadata={
            "help": "where they come from: a word list (web), a shipped list or a file "
            "(command line); empty = a seeded sample of the training secrets"
        },
    )
    val_split: str = field(
        default="",
        metadata={
            "help": "only words of this split of val_word_list (empty = all)",
            "choices": SPLITS,
        },
    )
    val_steps: int = field(
        default=10, metadata={"help": "validate every N steps (and after the last)"}
    )
    warn_val_drop: float = field(
        default=0.15,
        metadata={
            "help": "warn when validation success falls this far "
            "(absolute) below its value before training"
        },
    )
    seed: int = field(default=0, metadata={"help": "seed of the secret order and of every rollout"})

    def __post_init__(self) -> None:
        """Reject a bad config; the checks run in a fixed order, so the first error is stable."""
        self._check_inputs()
        self._check_rollouts()
        self._check_rewards()
        self._check_loss()
        self._check_optimisation()
        self._check_model()
        self._check_monitoring()
        self._check_validation()

    def _check_inputs(self) -> None:
        """What to train, on what."""
        _check(bool(self.base_model.strip()), "base_model: name the policy to start from")
        _check(bool(self.judge.strip()), "judge: name a judge")
        _check(bool(self.word_list.strip()), "word_list: name the training secrets")
        _check(self.split in SPLITS, f"split must be one of {', '.join(repr(s) for s in SPLITS)}")
        _check(self.limit_words >= 0, "limit_words must be 0 (all) or positive")

    def _check_rollouts(self) -> None:
        """How the games are played and sampled."""
        check_between(self, "steps", 1, 100_000)
        check_between(self, "secrets_per_step", 1, 4096)
        _check(
            2 <= self.num_generations <= 256,
            "num_generations must be between 2 and 256 (a group needs two)",
        )
        check_between(self, "max_turns", 1, 200)
        check_guesser_prompt(self.guesser_prompt)
        check_choice(self, "win_rule", WIN_RULES)
        _check(
            0 < self.temperature <= 10,
            "temperature must be in (0, 10] (GRPO samples; greedy has no ratio)",
        )
        check_between(self, "max_completion_length", 1, 4096)

    def _check_rewards(self) -> None:
        """The advantage, the reward terms and the StarPO-S filter."""
        check_choice(self, "advantage", ADVANTAGES)
        _check(0 <= self.belief_coef <= 100, "belief_coef must be in [0, 100]")
        _check(0 <= self.infogain_coef <= 100, "infogain_coef must be in [0, 100]")
        _check(
            not self.pool_word_list or self.infogain_coef > 0,
            "pool_word_list is the information-gain reward's candidates: "
            "set infogain_coef > 0 to use it",
        )
        rewards = (
            self.win_reward,
            self.turn_penalty,
            self.invalid_penalty,
            self.repeated_penalty,
            self.unknown_penalty,
        )
        _check(all(math.isfinite(v) for v in rewards), "rewards must be finite numbers")
        check_choice(self, "scale_rewards", SCALE_REWARDS)
        _check(0 < self.rollout_filter_ratio <= 1, "rollout_filter_ratio must be in (0, 1]")

    def _check_loss(self) -> None:
        """The clipped objective, its KL term and aggregation, and how turns share credit."""
        _check(0 <= self.epsilon < 1, "epsilon must be in [0, 1)")
        _check(0 <= self.epsilon_high <= 10, "epsilon_high must be in [0, 10]")
        _check(0 <= self.beta <= 100, "beta must be in [0, 100]")
        _check(
            self.loss_agg_mode in ("", *LOSS_AGG_MODES),
            f"loss_agg_mode must be empty (the paper's) or one of {', '.join(LOSS_AGG_MODES)}",
        )
        check_choice(self, "turn_penalty_at", PENALTY_AT)
        _check(
            self.turn_normalisation in TURN_NORMALISATIONS,
            f"turn_normalisation must be one of {', '.join(TURN_NORMALISATIONS)}",
        )

    def _check_optimisation(self) -> None:
        """AdamW, the passes and the mini-batches."""
        _check(
            0 <= self.adam_beta1 < 1 and 0 <= self.adam_beta2 < 1,
            "adam_beta1 and adam_beta2 must be in [0, 1)",
        )
        check_between(self, "num_iterations", 1, 64)
        check_between(self, "mini_batches", 1, 1024)
        _check(
            self.mini_batches <= self.secrets_per_step * self.num_generations,
            "mini_batches cannot exceed the games per step (secrets_per_step × num_generations)",
        )
        check_between(self, "forward_batch_size", 1, 4096)
        _check(0 < self.learning_rate < 1, "learning_rate must be in (0, 1)")
        _check(0 <= self.weight_decay < 1, "weight_decay must be in [0, 1)")
        _check(self.max_grad_norm >= 0, "max_grad_norm must be >= 0")

    def _check_model(self) -> None:
        """LoRA, the rollout backend, precision and threads."""
        _check(
            1 <= self.lora_rank <= 1024 and self.lora_alpha >= 1,
            "lora_rank must be in [1, 1024], lora_alpha >= 1",
        )
        _check(0 <= self.lora_dropout < 1, "lora_dropout must be in [0, 1)")
        _check(
            bool(self.lora_target_modules.strip()),
            "lora_target_modules: all-linear or module names",
        )
        _check(
            self.rollout_backend in ROLLOUT_BACKENDS,
            f"rollout_backend must be one of {', '.join(ROLLOUT_BACKENDS)}",
        )
        _check(
            self.rollout_backend != "vllm" or self.lora,
            "rollout_backend=vllm needs lora=true "
            "(the adapter is what is synced to vLLM each step)",
        )
        _check(
            0 < self.vllm_gpu_memory_utilization < 1,
            "vllm_gpu_memory_utilization must be in (0, 1)",
        )
        check_choice(self, "precision", PRECISIONS)
        check_between(self, "cpu_threads", 0, 1024)

    def _check_monitoring(self) -> None:
        """Checkpoints and the collapse warnings."""
        _check(self.save_steps >= 1, "save_steps must be >= 1")
        check_between(self, "warn_window", 2, 1000)
        _check(0 < self.warn_drop_fraction < 1, "warn_drop_fraction must be in (0, 1)")
        _check(self.warn_grad_norm_factor > 1, "warn_grad_norm_factor must be > 1")

    def _check_validation(self) -> None:
        """The greedy validation games."""
        _check(
            0 <= self.val_secrets <= 4096, "val_secrets must be between 0 (no validation) and 4096"
        )
        _check(
            self.val_split in SPLITS,
            f"val_split must be one of {', '.join(repr(s) for s in SPLITS)}",
        )
        _check(
            not self.val_split or bool(self.val_word_list.strip()),
            "val_split needs a val_word_list",
        )
        _check(self.val_steps >= 1, "val_steps must be >= 1")
        _check(0 < self.warn_val_drop <= 1, "warn_val_drop must be in (0, 1]")

    @property
    def target_modules(self) -> str | list[str]:
        names = [m.strip() for m in self.lora_target_modules.split(",") if m.strip()]
        return "all-linear" if names == ["all-linear"] else names

    @property
    def aggregation(self) -> str:
        """The loss aggregation in force: the field, or the paper's for the advantage."""
        return self.loss_agg_mode or PAPER_LOSS_AGG[self.advantage]

    @property
    def games_per_step(self) -> int:
        return self.secrets_per_step * self.num_generations

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
