"""The learning benchmark's settings (`--set FIELD=VALUE` changes one)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Scale:
    # -- the world: a seeded pool of knowledge-base nouns and disjoint splits of it ---------------
    pool: int = 400  # candidate words (the teacher's pool and the knowledge stage's words)
    sft: int = 150  # secrets of the teacher's SFT games
    rl: int = 50  # GRPO's own secrets (never in SFT games)
    val: int = 50  # validation secrets: settings are chosen on them; no game-format row about them
    test: int = 150  # test secrets: reported once per configuration; no game-format row about them
    # -- the tiny model -------------------------------------------------------------------------
    hidden: int = 128
    layers: int = 4
    intermediate: int = 384
    vocab: int = 4096
    # -- knowledge stage (stands for pretraining: every pool word, test words included) ----------
    knowledge_epochs: float = 3.0
    knowledge_lr: float = 2e-3
    knowledge_sequences: int = 10  # per word, alternating statements and answered questions
    # -- SFT on an imperfect teacher's games -------------------------------------------------------
    sft_epochs: float = 8.0
    sft_lr: float = 2e-3
    sft_device_batch: int = (
        8  # micro-batches cut by length (batch_rebalance): smaller ones pad less
    )
    teacher_temperature: float = (
        0.1  # bits: the information-gain teacher draws questions ∝ exp(score / T)
    )
    teacher_guess_bonus: float = (
        0.5  # its bonus for a guess's chance to win (first guess with 1-3 words left)
    )
    recovery_per_game: int = (
        4  # DAgger-style rows per teacher game (training.sft.data.recovery_examples)
    )
    naming_per_word: int = (
        16  # naming rows per RL secret (training.knowledge.naming; never val or test)
    )
    naming_temperature: float = 0.1  # bits: how random the naming histories' questioner is
    naming_train: str = (
        "word"  # word: only the named word is trained ("Is it" is context); guess: the whole guess
    )
    # -- GRPO: StarPO (trajectory, λ = 0) and CIA (per turn, λ = 0.1) from each seed's SFT model --
    grpo_steps: int = 40
    grpo_secrets: int = 8
    grpo_generations: int = 8
    grpo_lr: float = (
        1e-4  # a tiny model from scratch (the paper: 1e-5 StarPO, 3e-5 CIA with LoRA on 1.7B)
    )
    grpo_mini_batches: int = 2  # optimizer steps per pass over a step's rollouts
    grpo_temperature: float = 1.0
    grpo_unknown_penalty: float = (
        -1.0
    )  # an ungroundable question (a word the KB does not know) costs as a repeat
    grpo_secret_splits: str = "rl+sft"  # GRPO's training secrets
    grpo_val_secrets: int = (
        16  # SFT secrets played greedily every grpo_val_steps: forgetting shows here first
    )
    grpo_val_steps: int = 10
    # -- evaluation and seeds ---------------------------------------------------------------------
    max_turns: int = 20
    guesser_prompt: str = (
        "short"  # games.llm.chat.GUESSER_PROMPTS: ~40 tokens instead of the paper's ~290
    )
    win_rule: str = (
        "reference"  # games.rules: the rule games are played under (strict success reported beside)
    )
    eval_samples: int = (
        8  # games per word at eval_temperature: success is mean@8, as the paper reports it
    )
    eval_temperature: float = 1.0
    rl_eval_samples: int = 4  # games per RL secret (does GRPO fit what it trains on?)
    seeds: str = "0+1+2"  # training seeds (SFT data order and teacher games, GRPO)
    world_seed: int = (
        0  # the pool, its splits, the tiny model and the knowledge stage (shared by every seed)
    )
    threads: int = 2  # torch threads

    @property
    def seed_list(self) -> list[int]:
        return [int(s) for s in self.seeds.split("+")]

    def to_dict(self) -> dict:
        return asdict(self)


QUICK = Scale(
    pool=60,
    sft=20,
    rl=10,
    val=10,
    test=20,
    hidden=32,
    layers=2,
    intermediate=64,
    vocab=2048,
    knowledge_epochs=1,
    knowledge_sequences=4,
    sft_epochs=1,
    grpo_steps=2,
    grpo_secrets=2,
    grpo_generations=4,
    max_turns=8,
    eval_samples=2,
    rl_eval_samples=1,
    grpo_val_secrets=2,
    seeds="0+1",
)


def with_settings(scale, items: list[str]):
    """`FIELD=VALUE` overrides, typed as the field."""
    for item in items:
        key, _, value = item.partition("=")
        if not hasattr(scale, key):
            raise SystemExit(f"--set {key}: no such setting")
        kind = type(getattr(scale, key))
        if kind is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise SystemExit(f"--set {key}: true or false, got {value!r}")
            scale = replace(scale, **{key: value.lower() in ("true", "1")})
        else:
            scale = replace(scale, **{key: kind(value)})
    try:
        _ = scale.seed_list  # validates the seeds
    except ValueError:
        raise SystemExit(f"--set seeds: integers joined by +, got {scale.seeds!r}") from None
    if hasattr(scale, "pool") and scale.sft + scale.rl + scale.val + scale.test > scale.pool:
        raise SystemExit("the splits do not fit in the pool")
    return scale
