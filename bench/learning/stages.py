"""The pipeline's training stages, each through the job kind's own runner (training/*)."""

from __future__ import annotations

import io
import random
import shutil
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from bench.learning.ordering import GRPO_ARMS
from bench.learning.scale import Scale

GRPO_SERIES = (
    "reward",
    "success_rate",
    "valid_rate",
    "repeated_rate",
    "unknown_rate",
    "rollout/in_group_std",
    "frac_reward_zero_std",
    "entropy",
    "grad_norm",
    "clip_ratio/low_mean",
    "clip_ratio/high_mean",
    "logprob_diff/rollout_abs_mean",
    "mean_turns",
    "belief/delta_positive_mean",
    "time/rollout_s",
    "time/step_s",
    "val/success_rate",
    "val/valid_rate",
)


def write_words(path: Path, words: Sequence[str]) -> str:
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return str(path)


def reporter_for(folder: Path, *, fresh: bool = True):
    """A reporter writing into `folder`, quietly. `fresh`: the folder removed first, a fresh run
    (the runners would resume from its checkpoints); not fresh, a stage that was cut off
    continues from them."""
    from training.reporting import ConsoleReporter

    if fresh and folder.exists():
        shutil.rmtree(folder)
    return ConsoleReporter(folder, stream=io.StringIO())


def metric_series(reporter, names: Sequence[str]) -> dict[str, list]:
    rows = [r for r in reporter.records if r["event"] == "metrics"]
    return {
        n: [round(r[n], 4) if isinstance(r.get(n), float) else r.get(n) for r in rows if n in r]
        for n in names
    }


def first_last(reporter, name: str = "loss") -> list | None:
    values = metric_series(reporter, [name])[name]
    return [values[0], values[-1]] if values else None


def trained(result: dict, reporter, **first) -> tuple[str, dict]:
    """A TRL run's (training.knowledge, training.sft) final checkpoint and summary: `first`, then
    its optimizer steps, first and last loss and tokens/s."""
    return result["final_checkpoint"], {
        **first,
        "steps": result["global_step"],
        "loss_first_last": first_last(reporter),
        "tokens_per_second": result.get("tokens_per_second"),
    }


def run_knowledge(scale: Scale, work: Path, base: str, pool_file: str) -> tuple[str, dict]:
    """Every pool word and its facts, held-out words included: what a real model knows from
    pretraining."""
    from training.knowledge.config import KnowledgeJobConfig
    from training.knowledge.trainer import run

    config = KnowledgeJobConfig(
        base_model=base,
        word_list=pool_file,
        epochs=scale.knowledge_epochs,
        sequences_per_word=scale.knowledge_sequences,
        learning_rate=scale.knowledge_lr,
        warmup_ratio=0.05,
        global_batch_size=32,
        per_device_batch_size=16,
        max_tokens=256,
        cpu_threads=scale.threads,
        seed=scale.world_seed,
    )
    reporter = reporter_for(work / "knowledge")
    result = run(config, reporter)
    return trained(result, reporter, sequences=result["sequences"])


def teacher_pool(world: dict[str, list[str]]) -> list[str]:
    """The teacher's candidates: the pool without the held-out words, so no SFT row, a wrong
    guess or a recovery guess included, names a validation or test word (the knowledge stage
    still teaches every pool word, as pretraining would)."""
    from bench.learning.world import held_out

    hidden = held_out(world)
    return [w for w in world["pool"] if w not in hidden]


def sft_config(scale: Scale, work: Path, base: str, world: dict[str, list[str]], seed: int):
    from training.sft.config import SFTJobConfig

    return SFTJobConfig(
        base_model=base,
        word_list=write_words(work / "sft.txt", world["sft"]),
        # the teacher guesses only words a row may name: never a validation or test word
        pool_word_list=write_words(work / "teacher-pool.txt", teacher_pool(world)),
        teacher="infogain",
        judge="kb:closed",
        epochs=scale.sft_epochs,
        learning_rate=scale.sft_lr,
        warmup_ratio=0.05,
        global_batch_size=32,
        per_device_batch_size=scale.sft_device_batch,
        max_tokens=1024,
        cpu_threads=scale.threads,
        max_turns=scale.max_turns,
        guesser_prompt=scale.guesser_prompt,
        seed=seed,
    )


def sft_rows(
    scale: Scale, config, reporter, world: dict[str, list[str]], seed: int
) -> tuple[list[dict], dict]:
    """An imperfect information-gain teacher's games (it draws each question with weight
    exp(score / teacher_temperature)) for the SFT secrets as rows, recovery rows (a teacher game
    cut short, wrong guesses appended, the teacher's next question) and naming rows
    (training.knowledge.naming) for the RL secrets. No row is about a validation or test secret,
    and none names one (the teacher's pool leaves them out)."""
    from games.guessers.infogain import InfoGainGuesser
    from games.judges.kb import KBJudge
    from games.kb import load_kb
    from games.llm.chat import GuesserFormat
    from training.common.data import build_teacher, gather_games, select_games
    from training.knowledge.naming import naming_examples
    from training.sft.data import recovery_examples, turn_examples

    chat_format = GuesserFormat.named(scale.guesser_prompt, max_turns=scale.max_turns)

    def make_teacher(words):
        return InfoGainGuesser(
            pool=list(words) if words is not None else None,
            max_turns=scale.max_turns,
            guess_bonus=scale.teacher_guess_bonus,
            temperature=scale.teacher_temperature,
        )

    games = select_games(
        gather_games(config, reporter, judge=KBJudge(closed=True), make_teacher=make_teacher),
        config.selection,
    )
    teacher = build_teacher(
        config, (g.secret for g in games), make_teacher=make_teacher, pool=teacher_pool(world)
    )
    teacher_rows = turn_examples(games, chat_format)
    recovery = (
        recovery_examples(games, teacher, chat_format, per_game=scale.recovery_per_game, seed=seed)
        if scale.recovery_per_game
        else []
    )
    naming = (
        naming_examples(
            load_kb(),
            world["pool"],
            words=world["rl"],
            chat_format=chat_format,
            per_word=scale.naming_per_word,
            temperature=scale.naming_temperature,
            seed=seed,
            train=scale.naming_train,
        )
        if scale.naming_per_word
        else []
    )
    rows = teacher_rows + recovery + naming
    forbidden = set(world["val"]) | set(world["test"])
    if any(r["secret"] in forbidden for r in rows):
        raise AssertionError("a game-format row about a validation or test secret")
    random.Random(seed).shuffle(rows)
    return rows, {
        "games": len(games),
        "teacher_won": sum(g.won for g in games),
        "teacher_mean_turns": round(statistics.fmean(g.n_turns for g in games), 2),
        "teacher_examples": len(teacher_rows),
        "recovery_examples": len(recovery),
        "naming_examples": len(naming),
    }


def run_sft(
    scale: Scale, work: Path, base: str, world: dict[str, list[str]], seed: int
) -> tuple[str, dict]:
    """training.sft on the rows of `sft_rows`, from the knowledge stage's model."""
    from training.sft.trainer import train_sft

    config = sft_config(scale, work, base, world, seed)
    reporter = reporter_for(work / f"sft-s{seed}")
    rows, counts = sft_rows(scale, config, reporter, world, seed)
    result = train_sft(config, reporter, rows, kind="sft", model_path=base, resolved=counts)
    return trained(result, reporter, seed=seed, **counts)


def run_grpo(
    scale: Scale, work: Path, base: str, world: dict[str, list[str]], judge, arm: str, seed: int
) -> tuple[str, dict]:
    """training.grpo from the seed's SFT model on the RL (and SFT) secrets; validation on 16 SFT
    secrets played greedily (what SFT fitted, and what a learning rate too high forgets first)."""
    from training.grpo.config import GRPOConfig
    from training.grpo.trainer import run

    advantage, belief = GRPO_ARMS[arm]
    words = [w for split in scale.grpo_secret_splits.split("+") for w in world[split]]
    config = GRPOConfig(
        base_model=base,
        steps=scale.grpo_steps,
        secrets_per_step=scale.grpo_secrets,
        num_generations=scale.grpo_generations,
        max_turns=scale.max_turns,
        temperature=scale.grpo_temperature,
        max_completion_length=24,
        advantage=advantage,
        win_rule=scale.win_rule,
        belief_coef=belief,
        learning_rate=scale.grpo_lr,
        unknown_penalty=scale.grpo_unknown_penalty,
        lora=False,
        mini_batches=scale.grpo_mini_batches,
        forward_batch_size=16,
        save_steps=scale.grpo_steps,
        cpu_threads=scale.threads,
        val_secrets=scale.grpo_val_secrets,
        val_games=1,  # the published runs': one game per validation secret
        val_steps=scale.grpo_val_steps,
        val_sampling="greedy",  # the published runs' validation (the job's default is the paper's)
        seed=seed,
    )
    reporter = reporter_for(work / f"{arm}-s{seed}")
    result = run(
        config, reporter, model_path=base, judge=judge, words=words, val_words=list(world["sft"])
    )
    warnings = [
        r["message"] for r in reporter.records if r["event"] == "log" and r["level"] == "warning"
    ]
    kept = (
        "steps",
        "secrets_per_step",
        "num_generations",
        "advantage",
        "belief_coef",
        "rollout_filter_ratio",
        "win_rule",
        "learning_rate",
        "turn_penalty_at",
        "turn_normalisation",
        "belief_on_finishing_turn",
        "unknown_penalty",
        "epsilon",
        "epsilon_high",
        "mini_batches",
        "temperature",
    )
    return result["final_checkpoint"], {
        "seed": seed,
        "config": {k: v for k, v in asdict(config).items() if k in kept}
        | {"loss_agg_mode": config.aggregation},
        "per_step": metric_series(reporter, GRPO_SERIES),
        "warnings": warnings,
        "validation": result["validation"],
    }
