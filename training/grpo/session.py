"""A GRPO run's session: its setup (devices and processes, the games, the policy and its
optimizer, resumed from the last checkpoint when there is one) and its checkpoints. The step
loop that works with it is training.grpo.trainer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from games.judges.base import Judge
from games.llm.chat import GuesserFormat
from training.common.data import playable_or_fail
from training.common.models import (
    DeviceSetup,
    count_parameters,
    device_setup,
    load_model,
    train_at,
)
from training.common.processes import process_problems
from training.common.trainer import ensure_owner, resolved_config, write_run_config
from training.grpo.checkpoints import load_policy, restore, save_checkpoint
from training.grpo.config import GRPOConfig
from training.grpo.diagnostics import CollapseMonitor
from training.grpo.distributed import Ranks
from training.grpo.rollouts import Rollouts, infogain_model, validation_secrets
from training.grpo.update import Updater
from training.reporting import Reporter


# -- the games ---------------------------------------------------------------------------------
def training_secrets(
    config: GRPOConfig, reporter: Reporter, judge: Judge, words: Sequence[str] | None
) -> list[str]:
    """The secrets the judge can play among `words` (default: config.word_list)."""
    if words is None:
        from games.wordlists import read_words

        words = read_words(config.word_list)
    return playable_or_fail(
        judge,
        words,
        reporter,
        limit=config.limit_words,
        none_left="no training secret can be played with this judge",
    )


def game_inputs(
    config: GRPOConfig,
    reporter: Reporter,
    judge: Judge | None,
    words: Sequence[str] | None,
    val_words: Sequence[str] | None,
    pool: Sequence[str] | None,
):
    """(judge, training secrets, validation secrets, the KB's candidate model when
    `infogain_coef` or the belief diagnostic needs it)."""
    if judge is None:
        from games.registry import build_judge

        judge = build_judge(config.judge)
    secrets = training_secrets(config, reporter, judge, words)
    val_secrets = validation_secrets(config, judge, secrets, val_words)
    needed = config.infogain_coef > 0 or belief_diagnosed(config)
    narrowing = infogain_model(config, judge, secrets, pool) if needed else None
    return judge, secrets, val_secrets, narrowing


def belief_diagnosed(config: GRPOConfig) -> bool:
    """Whether the run logs the belief diagnostic (ΔBelief is scored and it is asked for)."""
    return config.belief_coef > 0 and config.belief_diagnostic


# -- devices, policy and optimizer -------------------------------------------------------------
def parallel_setup(config: GRPOConfig) -> DeviceSetup:
    """The device, precision and processes (`accelerate launch` / torchrun: data parallel by
    groups); the in-process vLLM engine serves one process only."""
    setup = device_setup(config.precision)
    problems = process_problems(config, setup.world_size)
    if problems:
        raise ValueError("; ".join(problems))
    return setup


def accelerator_setup(accelerator: Any) -> DeviceSetup:
    """The device and precision an Accelerator runs at (its mixed precision: bf16 or none)."""
    precision = "bfloat16" if accelerator.mixed_precision == "bf16" else "float32"
    return DeviceSetup(accelerator.device.type, precision)


def trainee(config: GRPOConfig, accelerator: Any, base_path: str, resume: str | None):
    """(policy in train mode, tokenizer, AdamW over its trainable parameters), prepared; at bf16
    (the accelerator's mixed precision) the frozen base weights are bf16, the trained ones and
    their optimiser state float32 (training.common.models.train_at). Across
    processes the model is not wrapped in DDP: the updater sums the gradients itself, after the
    rows of a whole mini-batch (training.grpo.distributed)."""
    import torch
    from transformers import set_seed

    set_seed(config.seed)  # a fresh adapter starts the same in every run of the seed
    model, tokenizer = load_policy(config, base_path, resume)
    train_at(model, accelerator_setup(accelerator))  # bf16: the frozen base in bf16
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        params,
        lr=config.resolved_learning_rate,
        weight_decay=config.weight_decay,
        betas=(config.adam_beta1, config.adam_beta2),
    )
    if accelerator.num_processes > 1:
        model, optimizer = model.to(accelerator.device), accelerator.prepare(optimizer)
    else:
        model, optimizer = accelerator.prepare(model, optimizer)
    model.train()
    return accelerator.unwrap_model(model), tokenizer, optimizer


# -- the session -------------------------------------------------------------------------------
@dataclass
class Session:
    """What the step loop works with: the games, the policy and its optimizer, the rollout player,
    the collapse monitor and the metrics history (restored on resume)."""

    config: GRPOConfig
    reporter: Reporter
    out: Path
    judge: Judge
    secrets: list[str]
    val_secrets: list[str]
    narrowing: Any
    policy: Any
    tokenizer: Any
    optimizer: Any
    monitor: CollapseMonitor
    updater: Updater
    rollouts: Rollouts
    resume: str | None
    start: int
    history: list[dict]
    run_config: dict[str, Any] = field(default_factory=dict)
    ranks: Ranks = field(default_factory=Ranks)


def open_session(
    config: GRPOConfig,
    reporter: Reporter,
    accelerator: Any,
    *,
    out: Path,
    base_path: str,
    chat_format: GuesserFormat,
    resume: str | None,
    games: tuple[Judge, list[str], list[str], Any],
    ranks: Ranks | None = None,
) -> Session:
    """Load the policy (from `resume` when there is one), restore the optimizer, monitor and
    history, and build the updater (with a frozen reference for KL without LoRA) and the
    rollout player."""
    judge, secrets, val_secrets, narrowing = games
    policy, tokenizer, optimizer = trainee(config, accelerator, base_path, resume)
    monitor = CollapseMonitor(
        config.warn_window,
        config.warn_drop_fraction,
        config.warn_grad_norm_factor,
        val_drop=config.warn_val_drop,
    )
    start, history = restore(resume, optimizer, monitor) if resume else (0, [])
    if resume:
        reporter.log(f"resuming from {resume} (step {start})")
    ranks = ranks or Ranks()
    ranks.same_start([p for p in policy.parameters() if p.requires_grad])
    updater = Updater(config, policy, optimizer, accelerator, tokenizer.pad_token_id, ranks)
    if config.beta and not config.lora:  # full fine-tuning: a frozen copy of the start
        reference = load_model(base_path)[0].eval().requires_grad_(False)
        updater.ref_model = train_at(reference, accelerator_setup(accelerator)).to(
            accelerator.device
        )
    rollouts = Rollouts(config, policy, tokenizer, base_path, out, chat_format)
    rollouts.push_weights(start, ranks)  # rollout_backend=server: the start's adapter
    return Session(
        config=config,
        reporter=reporter,
        out=out,
        judge=judge,
        secrets=secrets,
        val_secrets=val_secrets,
        narrowing=narrowing,
        policy=policy,
        tokenizer=tokenizer,
        optimizer=optimizer,
        monitor=monitor,
        updater=updater,
        rollouts=rollouts,
        resume=resume,
        start=start,
        history=history,
        ranks=ranks,
    )


def announce(
    session: Session,
    setup: DeviceSetup,
    *,
    base_path: str,
    adapter_path: str | None,
    prompt_name: str,
) -> int:
    """Write the resolved config (kept on the session for the checkpoints) and log the run's
    shape: the number of parameters trained."""
    config, secrets = session.config, session.secrets
    trainable, total = count_parameters(session.policy)
    session.run_config = resolved_config(
        "grpo",
        config,
        base_model_path=base_path,
        adapter_path=adapter_path,
        device=setup.device,
        precision=setup.precision,
        secrets=len(secrets),
        parameters_trained=trainable,
        parameters=total,
        guesser_prompt=prompt_name,
        processes=setup.world_size,
        **config.resolved(),
    )
    if session.ranks.is_main:
        write_run_config(session.out, session.run_config)
    session.reporter.log(
        f"grpo: {len(secrets)} secrets, {config.secrets_per_step}×{config.num_generations} "
        f"games per step, advantage={config.advantage}, λ={config.belief_coef}, "
        f"lr={config.resolved_learning_rate:g}, loss_agg_mode={config.aggregation}, "
        f"{trainable:,} of {total:,} parameters trained on {setup.device}"
        + (f" × {setup.world_size} processes" if setup.world_size > 1 else "")
    )
    return trainable


def checkpoint(session: Session, step: int, metrics: dict) -> Path:
    """Save checkpoint-<step> (weights or adapter, optimizer, monitor, config, history) and
    report it; across processes rank 0 writes (every rank holds the same weights and optimizer
    state) while the others wait."""
    reporter, folder = session.reporter, session.out / f"checkpoint-{step}"
    if not session.ranks.is_main:
        session.ranks.barrier()
        return folder
    ensure_owner(reporter)  # a superseded worker must not write the checkpoint folder
    folder = save_checkpoint(
        folder,
        model=session.policy,
        tokenizer=session.tokenizer,
        optimizer=session.optimizer,
        step=step,
        monitor=session.monitor,
        run_config=session.run_config,
        history=session.history,
    )
    reporter.checkpoint(
        step, folder, metrics=metrics, config=session.run_config, is_adapter=session.config.lora
    )
    session.ranks.barrier()
    return folder
