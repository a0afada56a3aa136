"""The GRPO job's config: multi-turn GRPO on 20Q games with StarPO or ΔBelief (CIA) credit.

Names follow TRL's GRPOConfig where it has the knob (`num_generations`, `epsilon`,
`epsilon_high`, `beta`, `num_iterations`, `scale_rewards`, `temperature`,
`max_completion_length`), verl's `loss_agg_mode` and `clip_ratio_c` (dual clip), and RAGEN's
`rollout_filter_ratio`. Defaults are the ΔBelief-RL reference's (its base_multiturn.yaml, verl's
defaults under it, and its CIA / StarPO training scripts); a default of 0 or empty that stands for
the paper's value for the advantage is resolved by a property and recorded in the run's resolved
config (`resolved()`). Importing this module is cheap (no torch): the web process builds launch
forms from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Optional

from games.llm.base import PAPER_VAL_SAMPLING
from training.common.config import (
    OPEN_UNIT_INTERVAL,
    POSITIVE_FRACTION,
    UNIT_FRACTION,
    LoraSettings,
    base_model_knob,
    guesser_prompt_field,
    judge_knob,
    knob,
    limit_words_knob,
    lora_field,
    max_turns_knob,
    precision_knob,
    question_tokens_knob,
    split_knob,
    temperature_knob,
    win_rule_knob,
)
from training.common.presets import Presets
from training.grpo.checks import check_config
from training.grpo.choices import (  # noqa: F401 (importers read them here too)
    ADVANTAGES,
    ALL_SECRETS,
    GRPO_PRESETS,
    LOSS_AGG_MODES,
    PAPER_BELIEF_COEF,
    PAPER_LEARNING_RATE,
    PAPER_LOSS_AGG,
    PENALTY_AT,
    ROLLOUT_BACKENDS,
    SCALE_REWARDS,
    TURN_NORMALISATIONS,
    VAL_SAMPLINGS,
)


@dataclass(frozen=True)
class GRPOConfig(Presets, LoraSettings):
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = GRPO_PRESETS
    PRESET_KIND: ClassVar[str] = "GRPO"

    # -- what to train, on what ------------------------------------------------------------
    base_model: str = base_model_knob("the policy")
    judge: str = judge_knob("the judge (environment): a model spec name or games spec")
    word_list: str = knob(
        "dbrl/train_rl",
        ("training secrets: a word list name (web), a shipped list or a file (command line)"),
    )
    split: str = split_knob()
    limit_words: int = limit_words_knob()
    # -- rollouts ------------------------------------------------------------------------------
    steps: int = knob(100, "GRPO steps (one batch of rollouts each)", min=1, max=100_000)
    secrets_per_step: int = knob(240, "secrets (groups) per step", min=1, max=4096, paper=240)
    num_generations: int = knob(16, "G: rollouts per secret (the group)", min=2, max=256, paper=16)
    max_turns: int = max_turns_knob("questions per game (also stated in the prompt)", paper=20)
    win_rule: str = win_rule_knob(
        "which questions win (games.rules): reference, the paper's scripts' (the secret as a "
        "whole word anywhere in the question once punctuation and digits are dropped; no "
        "lemma or stem match, no question-word check), lemma (reference plus lemma/stem "
        "matches) or strict (a guess of one thing that is the secret)"
    )
    guesser_prompt: str = guesser_prompt_field()
    temperature: float = temperature_knob(
        "sampling temperature; log-probs in the loss use the same temperature", high=10, paper=1.0
    )
    max_completion_length: int = question_tokens_knob(
        "most tokens per question (the reference's max_response_length)", high=4096, paper=50
    )
    mask_end_of_turn: bool = knob(
        True,
        (
            "leave the end-of-turn token that closes each question (<|im_end|>) out of the "
            "loss, as the reference's loss mask does; false = train it as a question token"
        ),
        paper=True,
    )
    # -- rewards and advantages ---------------------------------------------------------------
    advantage: str = knob(
        "turn",
        (
            "turn: normalise each turn's r_t over the group's rollouts (ΔBelief/CIA); "
            "trajectory: normalise the return over the group (StarPO)"
        ),
        choices=ADVANTAGES,
        paper={"CIA": "turn", "StarPO": "trajectory"},
    )
    belief_coef: Optional[float] = knob(  # noqa: UP045 (typing.Union: the forms read it)
        None,
        (
            "λ in r_t = score_t + r_end + λ·max(ΔBelief_t, 0) (also added to the "
            "trajectory return; 0 = no ΔBelief, no belief scoring); empty = the paper's for the "
            "advantage (turn: 0.1, its CIA run; trajectory: 0, its StarPO run), recorded resolved"
        ),
        min=0,
        max=100,
        paper={"CIA": 0.1, "StarPO": 0.0},
    )
    turn_penalty_at: str = knob(
        "end",
        (
            "end: turn_penalty × turns is part of r_end, on every turn (the reference); "
            "turn: in each turn's own reward (an ablation: per-turn normalisation cancels it)"
        ),
        choices=PENALTY_AT,
    )
    belief_on_finishing_turn: bool = knob(
        False, "keep ΔBelief's bonus on the turn that wins (the reference zeroes it)"
    )
    turn_normalisation: str = knob(
        "padded",
        (
            "advantage=turn: padded normalises turn t over every rollout "
            "of the secret, a game that ended earlier counting 0 (the reference); "
            "reached: over the rollouts that reached t (an ablation)"
        ),
        choices=TURN_NORMALISATIONS,
    )
    infogain_coef: float = knob(
        0.0,
        (
            "μ: each turn also earns μ × the bits by which the answer narrows "
            "the knowledge base's candidates consistent with the game so far (a win: "
            "every remaining bit; a guess of a word already ruled out: 0); 0 = off"
        ),
        min=0,
        max=100,
    )
    pool_word_list: str = knob(
        "",
        (
            "the candidates of the information-gain reward "
            "(the training secrets are added); empty = every knowledge-base noun"
        ),
    )
    belief_diagnostic: bool = knob(
        True,
        (
            "with belief_coef > 0, log whether ΔBelief tracks progress (games.belief_progress): "
            "belief/progress_corr, Pearson r of ΔBelief with the bits each turn narrows the "
            "knowledge base's candidates (KB-grounded turns only; pool_word_list or every KB "
            "noun), belief/relu_per_game, belief/net_per_game, belief/cancelling_share"
        ),
    )
    win_reward: float = knob(2.0, "r_end of a won game (added to every turn)", paper=2.0)
    turn_penalty: float = knob(-0.05, "reward of every turn", paper=-0.05)
    invalid_penalty: float = knob(-5.0, "reward of an invalid question", paper=-5.0)
    repeated_penalty: float = knob(-1.0, "reward of a repeated question", paper=-1.0)
    unknown_penalty: float = knob(
        0.0,
        (
            "reward of a question the judge cannot ground (the knowledge-base "
            "judge on a concept it does not know); 0 = it costs only its turn"
        ),
    )
    scale_rewards: str = knob(
        "group",
        ("group: divide by the group's reward std; none: only subtract the mean (Dr. GRPO)"),
        choices=SCALE_REWARDS,
    )
    rollout_filter_ratio: float = knob(
        1.0,
        (
            "StarPO-S: keep this top fraction of secret groups by reward std "
            "(1 = keep every group, as the ΔBelief-RL reference does; RAGEN's StarPO-S keeps 0.25)"
        ),
        **POSITIVE_FRACTION,
    )
    # -- the loss ----------------------------------------------------------------------------------
    epsilon: float = knob(
        0.2, "lower clip range ε_low: ratios below 1 − ε are clipped", **UNIT_FRACTION, paper=0.2
    )
    epsilon_high: float = knob(
        0.28, "upper clip range ε_high (clip-higher, DAPO)", min=0, max=10, paper=0.28
    )
    log_ratio_clamp: float = knob(
        20.0,
        (
            "the log-ratio log π − log π_old is clamped to ±this before exp (verl's "
            "compute_policy_loss, the reference's: 20), so one token's ratio cannot overflow"
        ),
        min=0,
        max=100,
        min_open=True,
        paper=20.0,
    )
    clip_ratio_c: float = knob(
        3.0,
        (
            "dual-clip PPO (verl's clip_ratio_c, the reference's 3): a token with a negative "
            "advantage loses at most −A·c however large its ratio; must be > 1, 0 = off"
        ),
        min=0,
        max=100,
        paper=3.0,
    )
    beta: float = knob(
        0.0,
        ("KL coefficient to the frozen start model (k3 estimator); 0 = no KL, no reference model"),
        min=0,
        max=100,
        paper=0.0,
    )
    use_bias_correction_kl: bool = knob(
        False,
        (
            "multiply the KL term by the importance ratio "
            "(TRL's default, DeepSeek-V3.2); false = plain k3"
        ),
    )
    loss_agg_mode: str = knob(
        "",
        (
            "token-mean: every trained token weighs the same; "
            "seq-mean-token-mean: mean over each game's tokens, then over games; empty: "
            "the paper's for the advantage (turn: token-mean, trajectory: seq-mean-token-mean)"
        ),
        choices=("", *LOSS_AGG_MODES),
        paper={"CIA": "token-mean", "StarPO": "seq-mean-token-mean"},
    )
    num_iterations: int = knob(1, "μ: passes over each batch of rollouts", min=1, max=64, paper=1)
    mini_batches: int = knob(
        3,
        (
            "optimizer steps per pass: the step's games split into this many mini-batches "
            "(fewer when fewer games are kept; the paper: 3, train_batch_size 240 / "
            "ppo_mini_batch_size 80)"
        ),
        min=1,
        max=1024,
        paper=3,
    )
    shuffle_mini_batches: bool = knob(
        False,
        (
            "deal the step's games into mini-batches in a seeded random order; false = in "
            "order, each mini-batch a run of whole groups where the sizes allow (verl's "
            "actor shuffle: False, the reference's)"
        ),
        paper=False,
    )
    forward_batch_size: int = knob(
        32,
        "sequences per forward/backward (gradient accumulation makes up a mini-batch)",
        min=1,
        max=4096,
    )
    learning_rate: float = knob(
        0.0,
        (
            "AdamW learning rate (constant); 0 = the paper's for the advantage "
            "(turn: 3e-5, its CIA run; trajectory: 1e-5, its StarPO run)"
        ),
        **UNIT_FRACTION,
        paper={"CIA": 3e-5, "StarPO": 1e-5},
    )
    adam_beta1: float = knob(0.9, "AdamW β1 (the reference: 0.9)", **UNIT_FRACTION, paper=0.9)
    adam_beta2: float = knob(0.95, "AdamW β2 (the reference: 0.95)", **UNIT_FRACTION, paper=0.95)
    weight_decay: float = knob(
        0.01, "AdamW weight decay (verl's default, the reference's)", **UNIT_FRACTION, paper=0.01
    )
    max_grad_norm: float = knob(1.0, "gradient clipping norm (0 = none)", min=0, paper=1.0)
    # -- model -------------------------------------------------------------------------------------
    lora: bool = lora_field("lora", True, paper=True)
    lora_rank: int = lora_field("lora_rank", 64, paper=64)  # the reference's scripts: r 64, α 64
    lora_alpha: int = lora_field("lora_alpha", 64, paper=64)
    lora_dropout: float = lora_field("lora_dropout", paper=0.0)
    lora_target_modules: str = lora_field("lora_target_modules", paper="all-linear")
    rollout_backend: str = knob(
        "transformers",
        (
            "transformers: the policy itself generates; vllm: "
            "a vLLM engine with the adapter synced every step (GPU, needs lora); server: "
            "a vLLM server at rollout_server generates, the adapter loaded into it after "
            "every update (needs lora and a filesystem the server shares)"
        ),
        choices=ROLLOUT_BACKENDS,
    )
    rollout_server: str = knob(
        "",
        (
            "rollout_backend=server: the generation server's URL (vLLM's OpenAI-compatible "
            "server or training.grpo.standin_server), e.g. http://generation:8000"
        ),
    )
    vllm_gpu_memory_utilization: float = knob(
        0.4, "vLLM's share of GPU memory", **OPEN_UNIT_INTERVAL
    )
    precision: str = precision_knob()
    cpu_threads: int = knob(0, "torch threads on a CPU (0 = every core)", min=0, max=1024)
    # -- checkpoints and warnings ------------------------------------------------------------------
    save_steps: int = knob(10, "checkpoint every N steps (the last step always)", min=1)
    warn_window: int = knob(10, "steps of history the collapse warnings look at", min=2, max=1000)
    warn_drop_fraction: float = knob(
        0.25,
        ("warn when reward std or entropy falls below this fraction of its max over the window"),
        **OPEN_UNIT_INTERVAL,
    )
    warn_grad_norm_factor: float = knob(
        5.0,
        "warn when the grad norm exceeds this multiple of its median over the window",
        min=1,
        min_open=True,
    )
    # -- validation: a fixed set of secrets, to see forgetting the rollouts hide ------------------
    val_secrets: int = knob(
        ALL_SECRETS,
        (
            "secrets played (val_games games each, seeded) before step 1 and every val_steps "
            "steps: a seeded sample of this many; -1 = every word of val_word_list (the "
            "reference's); 0 = no validation"
        ),
        min=ALL_SECRETS,
        max=4096,
        paper=ALL_SECRETS,
    )
    val_games: int = knob(
        4, "games per validation secret (the reference's val.n)", min=1, max=64, paper=4
    )
    val_word_list: str = knob(
        "dbrl/paper_val",
        (
            "where they come from: a word list (web), a shipped list or a file "
            "(command line); empty = the training secrets (needs allow_val_overlap)"
        ),
        paper="dbrl/paper_val",
    )
    val_split: str = split_knob("only words of this split of val_word_list (empty = all)")
    val_steps: int = knob(
        4, "validate every N steps (and after the last; the reference's test_freq)", min=1, paper=4
    )
    allow_val_overlap: bool = knob(
        False,
        (
            "validate on words the job also trains on (an empty val_word_list, or lists that "
            "share words); false = such a job is refused"
        ),
    )
    val_sampling: str = knob(
        "paper",
        (
            "how validation games are sampled: paper (the reference's validation: "
            "temperature 0.7, top-p 0.8, top-k 20, seeded) or greedy"
        ),
        choices=VAL_SAMPLINGS,
        paper="paper",
    )
    warn_val_drop: float = knob(
        0.15,
        ("warn when validation success falls this far (absolute) below its value before training"),
        **POSITIVE_FRACTION,
    )
    seed: int = knob(0, "seed of the secret order and of every rollout")

    def __post_init__(self) -> None:
        """Resolve the paper's λ for the advantage, then reject a bad config (training.grpo.checks:
        in a fixed order, so the first error is stable)."""
        if self.belief_coef is None:  # frozen: the one resolving write, recorded with the job
            paper = PAPER_BELIEF_COEF.get(self.advantage, PAPER_BELIEF_COEF["turn"])
            object.__setattr__(self, "belief_coef", paper)
        check_config(self)

    @property
    def aggregation(self) -> str:
        """The loss aggregation in force: the field, or the paper's for the advantage."""
        return self.loss_agg_mode or PAPER_LOSS_AGG[self.advantage]

    @property
    def resolved_learning_rate(self) -> float:
        """The learning rate in force: the field, or the paper's for the advantage."""
        return self.learning_rate or PAPER_LEARNING_RATE[self.advantage]

    @property
    def val_sampling_params(self) -> dict[str, float]:
        """temperature, top_p and top_k of the validation games (temperature 0: greedy)."""
        if self.val_sampling == "greedy":
            return {"temperature": 0.0, "top_p": 1.0, "top_k": 0}
        return dict(PAPER_VAL_SAMPLING)

    def resolved(self) -> dict[str, Any]:
        """The values the empty / 0 defaults stand for, as the run's resolved config records
        them: the loss aggregation, the learning rate, λ, the validation sampling."""
        return {
            "belief_coef": self.belief_coef,
            "loss_agg_mode": self.aggregation,
            "learning_rate": self.resolved_learning_rate,
            "val_sampling": {"name": self.val_sampling, **self.val_sampling_params},
        }

    @property
    def games_per_step(self) -> int:
        return self.secrets_per_step * self.num_generations

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
