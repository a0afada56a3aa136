"""Multi-turn GRPO: `run(config, reporter)` plays G games per secret in lock-step, turns them into
masked multi-turn sequences and takes clipped policy-gradient steps.

One step:
1. rollouts: `secrets_per_step` secrets × `num_generations` games through `games.rollout` with
   the policy as guesser (transformers: the model being trained, batched, prefix-cached;
   vLLM on GPU: the adapter saved this step and passed per request; server: a vLLM server at
   `rollout_server`, the adapter loaded into it after every update), ΔBelief scored by the
   same policy when `belief_coef` > 0;
2. rewards and advantages (training.grpo.advantages; with `infogain_coef` every turn also earns
   μ·bits of the knowledge base's candidate narrowing), StarPO-S keeps the top groups by std;
3. sequences (training.grpo.batch) and `num_iterations` × `mini_batches` optimizer steps.
   Old log-probs: on the first inner step they are the current forward's own values, detached
   (the ratio is exactly 1, as in TRL with one iteration) and kept for that mini-batch's later
   passes; the other mini-batches get theirs from a no-grad forward before any update. The
   sampler's log-probs only feed the `logprob_diff/rollout_abs_mean` diagnostic;
4. diagnostics, collapse warnings, checkpoints (adapter or full weights + optimizer + monitor
   state + the resolved config), cooperative stop.
With `val_secrets`, a fixed set of secrets is played (seeded; `val_sampling`: the reference's
validation sampling, T 0.7 / top-p 0.8 / top-k 20, or greedy) before step 1 (logged as step 0)
and every `val_steps` steps (`val/success_rate`, `val/valid_rate`, `val/mean_turns`).
The run's setup (devices, games, policy, resume) and its checkpoints: training.grpo.session.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from games.judges.base import Judge
from games.types import Trajectory
from training.common.models import cpu_threads, merge_adapter, quiet_libraries, run_guesser_format
from training.common.trainer import resume_checkpoint
from training.grpo.advantages import (
    RewardRule,
    add_info_gain,
    group_stds,
    groups_to_keep,
    trajectory_advantages,
    trajectory_return,
    turn_advantages,
    turn_rewards,
)
from training.grpo.batch import build_rows
from training.grpo.config import GRPOConfig
from training.grpo.diagnostics import CollapseMonitor, belief_metrics, rollout_metrics
from training.grpo.distributed import Ranks
from training.grpo.rollouts import (  # noqa: F401  (validation_secrets: the API)
    Rollouts,
    game_seed,
    step_secrets,
    validate,
    validation_secrets,
)
from training.grpo.session import (
    Session,
    announce,
    belief_diagnosed,
    checkpoint,
    game_inputs,
    open_session,
    parallel_setup,
)
from training.grpo.update import Updater
from training.reporting import Reporter, StopRequested


# -- rewards -----------------------------------------------------------------------------------
def reward_rule(config: GRPOConfig) -> RewardRule:
    return RewardRule(
        belief_coef=config.belief_coef,
        penalty_at=config.turn_penalty_at,
        finishing_belief=config.belief_on_finishing_turn,
    )


def step_advantages(
    config: GRPOConfig, trajectories: Sequence[Trajectory], groups: Sequence[int]
) -> list[list[float]]:
    """Per-turn advantage lists (trajectory mode: the game's advantage on every turn)."""
    scale, rule = config.scale_rewards == "group", reward_rule(config)
    if config.advantage == "turn":
        rewards = [turn_rewards(t, rule) for t in trajectories]
        return turn_advantages(
            rewards, groups, scale=scale, normalisation=config.turn_normalisation
        )
    returns = [trajectory_return(t, rule) for t in trajectories]
    adv = trajectory_advantages(returns, groups, scale=scale)
    return [[a] * t.n_turns for a, t in zip(adv, trajectories)]


# -- one step ----------------------------------------------------------------------------------
def train_step(
    config: GRPOConfig,
    step: int,
    secrets: Sequence[str],
    judge: Judge,
    rollouts: Rollouts,
    updater: Updater,
    narrowing: Any,
    ranks: Ranks | None = None,
) -> tuple[dict[str, float], int]:
    """Play the step's games, score them, keep the groups StarPO-S keeps and update the policy:
    (the step's metrics without validation, the number of tokens generated). Across processes
    each rank plays its share of the groups and every rank sees all the games."""
    ranks = ranks or Ranks()
    began = time.perf_counter()
    chosen = step_secrets(secrets, step, config.secrets_per_step, config.seed)
    plan = [(g, s) for g in range(len(chosen)) for s in range(config.num_generations)]
    groups = [g for g, _ in plan]
    trajectories = ranks.play_shared(
        groups,
        lambda mine: rollouts.play(
            step,
            [chosen[plan[i][0]] for i in mine],
            [game_seed(config.seed, step, *plan[i]) for i in mine],
            judge,
        ),
    )
    rolled = time.perf_counter()
    shaped = narrowing is not None and config.infogain_coef > 0
    bits = add_info_gain(trajectories, narrowing, config.infogain_coef) if shaped else None
    returns = [trajectory_return(t, reward_rule(config)) for t in trajectories]
    metrics = rollout_metrics(trajectories, returns, groups)
    if narrowing is not None and belief_diagnosed(config):
        metrics.update(belief_metrics(trajectories, narrowing))
    if bits is not None:
        metrics["rollout/info_gain_bits"] = sum(bits) / len(bits)
        metrics["rollout/candidates_left"] = sum(
            t.turns[-1].candidates_left for t in trajectories if t.turns
        ) / len(trajectories)
    kept = set(groups_to_keep(group_stds(returns, groups), config.rollout_filter_ratio))
    idx = [i for i, g in enumerate(groups) if g in kept]
    kept_trajs = [trajectories[i] for i in idx]
    advantages = step_advantages(config, kept_trajs, [groups[i] for i in idx])
    rows = build_rows(kept_trajs, advantages, rollouts.end_of_turn)
    own = {j for j, i in enumerate(idx) if ranks.owns(groups[i])}
    metrics.update(updater.update(rows, list(range(len(kept_trajs))), step, own) if rows else {})
    synced = rollouts.push_weights(step, ranks)  # rollout_backend=server: the new adapter
    done = time.perf_counter()
    generated = sum(
        len(t.extra.get("token_ids") or []) for traj in trajectories for t in traj.turns
    )
    trained = metrics.get("train/sequence_tokens", 0.0) * config.num_iterations
    flat_adv = [a for adv in advantages for a in adv]
    metrics.update(
        {
            "filter/kept_groups": float(len(kept)),
            "filter/kept_games": float(len(idx)),
            "advantages/abs_mean": sum(abs(a) for a in flat_adv) / max(len(flat_adv), 1),
            "learning_rate": config.resolved_learning_rate,
            "rollout/tokens_per_second": generated / max(rolled - began, 1e-9),
            "train/tokens_per_second": trained / max(done - rolled, 1e-9),
            "tokens_per_second": (generated + trained) / max(done - began, 1e-9),
            "time/rollout_s": rolled - began,
            "time/update_s": done - rolled,
            **({"time/weight_sync_s": synced} if config.rollout_backend == "server" else {}),
            "time/step_s": done - began,
        }
    )
    return metrics, generated + trained


def record(
    config: GRPOConfig,
    reporter: Reporter,
    monitor: CollapseMonitor,
    step: int,
    metrics: dict[str, float],
) -> int:
    """Check a step's `metrics` for collapse (its flags added to them) and report them: the
    number of warnings."""
    flags, messages = monitor.check(metrics)
    metrics.update(flags)
    for message in messages:
        reporter.log(f"step {step}: {message}", level="warning")
    reporter.metrics(step, metrics)
    reporter.progress(
        step / config.steps,
        f"step {step}/{config.steps}: success "
        f"{metrics['success_rate']:.0%}, reward {metrics['reward']:.3f}",
    )
    return len(messages)


def summary(
    config: GRPOConfig,
    *,
    start: int,
    folder: Path | None,
    base_path: str,
    warnings: int,
    trainable: int,
    history: list[dict],
    monitor: CollapseMonitor,
    val_secrets: Sequence[str],
    precision: str = "float32",
) -> dict[str, Any]:
    """What `run` returns: first and last step's headline metrics, the final checkpoint, the
    precision it trained at, validation."""
    first, last = (history[0], history[-1]) if history else ({}, {})
    keys = ("reward", "success_rate", "valid_rate", "entropy", "rollout/in_group_std")
    validation = None
    if val_secrets:
        validation = {
            "secrets": len(val_secrets),
            "games_per_secret": config.val_games,
            "sampling": config.val_sampling,
            "before": monitor.val_baseline,
            "last": next(
                (h["val/success_rate"] for h in reversed(history) if "val/success_rate" in h), None
            ),
        }
    return {
        "global_step": config.steps,
        "resumed_from": start,
        "final_checkpoint": str(folder) if folder else None,
        "is_adapter": config.lora,
        "base_model_path": base_path,
        "warnings": warnings,
        "first": {k: first.get(k) for k in keys},
        "last": {k: last.get(k) for k in keys},
        "parameters_trained": trainable,
        "precision": precision,
        "validation": validation,
    }


# -- the run ---------------------------------------------------------------------------------------
def val_sampling_text(config: GRPOConfig) -> str:
    """How the validation games are sampled, for the log: "paper sampling: T 0.7, top-p 0.8,
    top-k 20" or "greedy"."""
    if config.val_sampling == "greedy":
        return "greedy"
    p = config.val_sampling_params
    return f"{config.val_sampling} sampling: T {p['temperature']:g}, top-p {p['top_p']:g}, " + (
        f"top-k {p['top_k']}"
    )


def validate_before_training(session: Session) -> None:
    """Play the validation secrets before any update (a resumed run has its baseline) and log
    them at the start step."""
    if not session.val_secrets or session.monitor.val_baseline is not None:
        return
    before = validate(
        session.rollouts,
        session.val_secrets,
        session.judge,
        session.start,
        session.ranks,
        session.config.val_games,
    )
    session.monitor.check(before)
    session.reporter.metrics(session.start, before)
    session.reporter.log(
        f"validation on {len(session.val_secrets)} secrets before training "
        f"({val_sampling_text(session.config)}): success "
        f"{before['val/success_rate']:.0%}, valid questions {before['val/valid_rate']:.0%} "
        f"({session.config.val_games} games a secret)"
    )


def step_metrics(session: Session, step: int, tokens_seen: float) -> tuple[dict[str, float], float]:
    """One training step (and validation when due): (its metrics, the tokens seen so far)."""
    config = session.config
    metrics, tokens = train_step(
        config,
        step,
        session.secrets,
        session.judge,
        session.rollouts,
        session.updater,
        session.narrowing,
        session.ranks,
    )
    tokens_seen += tokens
    metrics["num_tokens"] = tokens_seen
    if session.val_secrets and (step % config.val_steps == 0 or step == config.steps):
        metrics.update(
            validate(
                session.rollouts,
                session.val_secrets,
                session.judge,
                step,
                session.ranks,
                config.val_games,
            )
        )
    return metrics, tokens_seen


def train_steps(session: Session) -> tuple[Path | None, int]:
    """Validate before training, then the steps after the start one: each recorded and
    checkpointed every `save_steps` and at the last; a stop request saves the steps not yet
    saved and raises StopRequested. (the last checkpoint folder, the number of warnings)"""
    config, reporter, history = session.config, session.reporter, session.history
    last_saved = session.start
    folder = Path(session.resume) if session.resume else None
    warnings = 0
    validate_before_training(session)
    tokens_seen = float(history[-1].get("num_tokens", 0.0)) if history else 0.0
    for step in range(session.start + 1, config.steps + 1):
        if session.ranks.main_says(reporter.should_stop()):
            if step - 1 > last_saved:
                checkpoint(session, step - 1, history[-1] if history else {})
            raise StopRequested()
        metrics, tokens_seen = step_metrics(session, step, tokens_seen)
        warnings += record(config, reporter, session.monitor, step, metrics)
        history.append({"step": step, **metrics})
        if step % config.save_steps == 0 or step == config.steps:
            folder, last_saved = checkpoint(session, step, metrics), step
    return folder, warnings


def run(
    config: GRPOConfig,
    reporter: Reporter,
    *,
    model_path: str | None = None,
    adapter_path: str | None = None,
    judge: Judge | None = None,
    words: Sequence[str] | None = None,
    val_words: Sequence[str] | None = None,
    pool: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Train; `model_path` (+ `adapter_path`, merged first) is the start policy (default
    config.base_model as a folder / hub id); `judge`, `words`, `val_words` and `pool` are resolved
    by the web app, else built from config.judge (games registry spec) and read from
    config.word_list, config.val_word_list and config.pool_word_list."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    quiet_libraries()
    setup = parallel_setup(config)
    # accelerate keeps one mixed precision per process, and a worker runs job after job, each at
    # its own precision: forget the last run's (the process group, PartialState, stays)
    AcceleratorState._reset_state()
    # several processes: this joins them (torch.distributed, gloo on the CPU)
    accelerator = Accelerator(
        cpu=setup.device == "cpu", mixed_precision="bf16" if setup.bf16 else "no"
    )
    ranks = Ranks(accelerator.num_processes, accelerator.process_index)
    out = Path(reporter.output_dir)
    base_path = model_path or config.base_model
    chat_format, prompt_name = run_guesser_format(
        config.guesser_prompt, adapter_path, base_path, max_turns=config.max_turns
    )
    if adapter_path:
        if ranks.is_main:
            merge_adapter(base_path, adapter_path, out / "base-merged")
        ranks.barrier()
        base_path = str(out / "base-merged")
    games = game_inputs(config, reporter, judge, words, val_words, pool)

    resume = resume_checkpoint(reporter)
    with cpu_threads(config.cpu_threads if setup.device == "cpu" else 0):
        session = open_session(
            config,
            reporter,
            accelerator,
            out=out,
            base_path=base_path,
            chat_format=chat_format,
            resume=resume,
            games=games,
            ranks=ranks,
        )
        trainable = announce(
            session,
            setup,
            base_path=base_path,
            adapter_path=adapter_path,
            prompt_name=prompt_name,
        )
        folder, warnings = train_steps(session)
    return summary(
        config,
        start=session.start,
        folder=folder,
        base_path=base_path,
        warnings=warnings,
        trainable=trainable,
        history=session.history,
        monitor=session.monitor,
        val_secrets=session.val_secrets,
        precision=setup.precision,
    )
