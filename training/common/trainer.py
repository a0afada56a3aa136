"""Glue between TRL/transformers trainers and a training.reporting.Reporter.

- `trainer_arguments(config, setup, output_dir)`: the TrainingArguments keywords every run shares
  (schedule, AdamW, batch = per-device × accumulation × devices, precision, checkpoints).
- `ReporterCallback`: forwards every log (TRL's names: loss, grad_norm, learning_rate,
  rewards/margins, ...) plus tokens_per_second to `reporter.metrics`, reports progress, writes the
  resolved config into each checkpoint folder and registers it with `reporter.checkpoint`, and
  stops cooperatively (saving first) when `reporter.should_stop()` (rank 0's, across processes:
  training.common.ranks).
- `resume_checkpoint(reporter)`: the checkpoint to continue from, if any.
- `stored_rows` / `store_rows`: a resumed run's training rows, kept in its output directory.
- `fit(trainer, callback, resume_from)`: trains, raising StopRequested after a requested stop.
- `trl_run_config(...)`: the resolved config a TRL run records (weights, devices, accumulation).
- `train_and_summarise(...)`: builds a TRL trainer with the callback, logs, fits (resuming) and
  summarises.
- `compact_lm_head_on_cpu()`: TRL's fused LM head scores only the trained positions on a CPU too.
"""

from __future__ import annotations

import json
import math
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from games.llm.chat import MODEL_RUN_CONFIG
from training.common.config import TrainConfig
from training.common.data import read_jsonl, write_jsonl
from training.common.models import (
    DeviceSetup,
    count_parameters,
    lora_inputs_uncast,
    peft_config,
    train_at,
)
from training.common.ranks import main_says
from training.reporting import Reporter, StopRequested

RUN_CONFIG = (
    MODEL_RUN_CONFIG  # training_config.json; HF's config.json (the architecture) sits next to it
)
NEVER = 10**9


def trainer_arguments(
    config: TrainConfig, setup: DeviceSetup, output_dir: str | Path
) -> dict[str, Any]:
    return dict(
        output_dir=str(output_dir),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps or -1,
        learning_rate=config.learning_rate,
        lr_scheduler_type=config.lr_scheduler,
        warmup_steps=config.warmup_ratio,  # < 1: a fraction of the training steps
        weight_decay=config.weight_decay,
        adam_beta1=config.adam_beta1,
        adam_beta2=config.adam_beta2,
        optim="adamw_torch",
        max_grad_norm=config.max_grad_norm,
        per_device_train_batch_size=config.per_device_batch_size,
        gradient_accumulation_steps=setup.accumulation(
            config.global_batch_size, config.per_device_batch_size
        ),
        bf16=setup.bf16,  # autocast through accelerate (CPU too); weights: train_at
        use_cpu=setup.device == "cpu",
        # the name transformers 5.18-5.20 (vLLM's pin on GPU workers) know; 5.23+ take it as the
        # deprecated alias of activation_checkpointing (a FutureWarning) until v6
        gradient_checkpointing=config.gradient_checkpointing,
        logging_steps=1,
        logging_first_step=True,
        save_strategy="steps",
        save_steps=config.save_steps or NEVER,  # the last step is saved either way
        seed=config.seed,
        data_seed=config.seed,
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
        ddp_find_unused_parameters=False,
    )


def trl_trainer(
    trainer_class: type,
    args_class: type,
    config: TrainConfig,
    model: Any,
    tokenizer: Any,
    dataset: Any,
    *,
    setup: DeviceSetup,
    output_dir: str | Path,
    callbacks: Sequence[Any],
    arguments: dict[str, Any],
    **keywords: Any,
) -> Any:
    """TRL's `trainer_class` on `dataset`: its `args_class` built from trainer_arguments,
    max_length = config.max_tokens and the trainer's own `arguments`; a LoRA adapter when
    config.lora (peft_config); `keywords` (e.g. DPO's ref_model) passed on. At bf16 the frozen
    weights (LoRA's base, a reference model) are cast to bf16 once the adapter is on (train_at)."""
    args = args_class(
        **trainer_arguments(config, setup, output_dir), max_length=config.max_tokens, **arguments
    )
    trainer = trainer_class(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config(config),
        callbacks=list(callbacks),
        **keywords,
    )
    train_at(trainer.model, setup)
    if getattr(trainer, "ref_model", None) is not None:
        train_at(trainer.ref_model, setup)
    return trainer


def code_version(root: Path = Path(__file__).resolve().parents[2]) -> dict[str, Any]:
    """The project's git commit and whether tracked files differ from it ({} outside a git
    checkout, e.g. an installed image)."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        return {
            "commit": git("rev-parse", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "-uno")),
        }
    except (OSError, subprocess.SubprocessError):
        return {}


def resolved_config(kind: str, config: TrainConfig, **resolved: Any) -> dict[str, Any]:
    """What a checkpoint stores about the run that made it (nanoGPT-style)."""
    import peft
    import torch
    import transformers
    import trl

    return {
        "kind": kind,
        "config": config.to_dict(),
        "resolved": resolved,
        "code": code_version(),
        "versions": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "trl": trl.__version__,
            "peft": peft.__version__,
            "python": platform.python_version(),
        },
    }


def trl_run_config(
    kind: str,
    config: TrainConfig,
    setup: DeviceSetup,
    *,
    model_path: str,
    adapter_path: str | None,
    **resolved: Any,
) -> dict[str, Any]:
    """resolved_config of a TRL run: the weights it starts from, the devices it runs on (with
    the gradient accumulation they make of the global batch) and the precision it trains at
    (config.precision resolved: float32 or bfloat16), then `resolved`."""
    return resolved_config(
        kind,
        config,
        model_path=model_path,
        adapter_path=adapter_path,
        device=setup.device,
        precision=setup.precision,
        world_size=setup.world_size,
        gradient_accumulation_steps=setup.accumulation(
            config.global_batch_size, config.per_device_batch_size
        ),
        **resolved,
    )


def write_run_config(folder: str | Path, run_config: dict[str, Any]) -> Path:
    path = Path(folder) / RUN_CONFIG
    path.write_text(json.dumps(run_config, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def ensure_owner(reporter: Reporter) -> None:
    """Before writing a checkpoint folder: a reporter fenced by a job claim (the web app's) raises
    if another worker took the job over, so two processes never write the same folder."""
    check = getattr(reporter, "ensure_owner", None)
    if check is not None:
        check()


def _is_complete(folder: Path) -> bool:
    return (folder / "trainer_state.json").is_file()


def resume_checkpoint(reporter: Reporter) -> str | None:
    """The reporter's last checkpoint, else the newest complete checkpoint-N folder in its output
    directory (saved just before a worker died), else None."""
    last = reporter.last_checkpoint()
    if last and _is_complete(Path(last["path"])):
        return str(last["path"])
    folders = [
        p for p in Path(reporter.output_dir).glob("checkpoint-*") if p.name.split("-")[-1].isdigit()
    ]
    folders = sorted(
        (p for p in folders if _is_complete(p)), key=lambda p: int(p.name.split("-")[-1])
    )
    return str(folders[-1]) if folders else None


def stored_rows(reporter: Reporter, file_name: str, noun: str | None = None) -> list[dict] | None:
    """A resumed run's rows stored as `file_name` in its output directory (logged as reused
    `noun` when given), else None: the rows are to be built and stored with store_rows."""
    cached = Path(reporter.output_dir) / file_name
    if not (resume_checkpoint(reporter) and cached.is_file()):
        return None
    rows = read_jsonl(cached)
    if noun:
        reporter.log(f"reusing {len(rows)} stored {noun} from {cached}")
    return rows


def store_rows(
    reporter: Reporter, file_name: str, rows: list[dict], *, artifact: str, meta: dict[str, Any]
) -> None:
    """Write a run's training rows as `file_name` in its output directory, reported as the
    `artifact` artifact, so that a resumed run trains on the same rows."""
    cached = Path(reporter.output_dir) / file_name
    write_jsonl(cached, rows)
    reporter.artifact(artifact, file_name, cached, meta=meta)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


class ReporterCallback(TrainerCallback):
    def __init__(self, reporter: Reporter, run_config: dict[str, Any], *, is_adapter: bool):
        self.reporter = reporter
        self.run_config = run_config
        self.is_adapter = is_adapter
        self.stopped = False
        self.last_logs: dict[str, float] = {}
        self.checkpoints: list[dict[str, Any]] = []
        self._clock = time.perf_counter()
        self._tokens = 0.0
        self._first_step: int | None = None

    # -- metrics ---------------------------------------------------------------------------
    def on_train_begin(self, args, state, control, **kwargs):
        self._clock, self._tokens = time.perf_counter(), 0.0
        self._first_step = state.global_step

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        values = {k: v for k, v in ((k, _number(v)) for k, v in logs.items()) if v is not None}
        now = time.perf_counter()
        tokens = values.get("num_tokens")
        if tokens is not None:
            if tokens >= self._tokens and now > self._clock:
                values["tokens_per_second"] = (tokens - self._tokens) / (now - self._clock)
            self._tokens = tokens
        self._clock = now
        if "train_runtime" not in values:
            self.last_logs = values
        self.reporter.metrics(state.global_step, values)
        if state.max_steps:
            self.reporter.progress(
                min(state.global_step / state.max_steps, 1.0),
                f"step {state.global_step}/{state.max_steps}",
            )

    # -- stopping and checkpoints -----------------------------------------------------------------
    def on_step_end(self, args, state, control, **kwargs):
        if main_says(self.reporter.should_stop()):  # across processes: rank 0's, for every rank
            self.stopped = True
            control.should_save = True  # resume continues from exactly here
            control.should_training_stop = True
        if control.should_save:
            ensure_owner(self.reporter)  # a superseded worker must not write the checkpoint folder
        return control

    def on_save(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        write_run_config(folder, {**self.run_config, "step": state.global_step})
        record = {"step": state.global_step, "path": str(folder), "metrics": dict(self.last_logs)}
        self.checkpoints.append(record)
        self.reporter.checkpoint(
            state.global_step,
            folder,
            metrics=record["metrics"],
            config=self.run_config,
            is_adapter=self.is_adapter,
        )
        self.reporter.log(f"checkpoint saved at step {state.global_step}: {folder}")


@contextmanager
def compact_lm_head_on_cpu() -> Iterator[None]:
    """TRL's fused LM head scores only the trained (label != -100) positions on Triton devices and
    every position elsewhere, to keep tile shapes fixed for compilers such as Neuron's. A CPU
    compiles nothing, and in turn-level SFT or DPO most positions are masked context: scoring only
    the trained ones gives the same loss and metrics 2-4× faster (tested). A no-op if TRL
    renames its private switch."""
    import trl.trainer.utils as trl_utils

    original = getattr(trl_utils, "_use_triton", None)
    if original is None:
        yield
        return
    trl_utils._use_triton = lambda device: device.type == "cpu" or original(device)
    try:
        yield
    finally:
        trl_utils._use_triton = original


def fit(trainer: Any, callback: ReporterCallback, resume_from: str | None) -> Any:
    """trainer.train(), continuing from `resume_from`; StopRequested once a requested stop has
    saved."""
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # logs go to the reporter, not to stdout
    if resume_from:
        callback.reporter.log(f"resuming from {resume_from}")
    with compact_lm_head_on_cpu(), lora_inputs_uncast(trainer.model, trainer.args.bf16):
        output = trainer.train(resume_from_checkpoint=resume_from)
    if callback.stopped:
        raise StopRequested()
    return output


def final_checkpoint(trainer: Any) -> Path:
    return Path(trainer.args.output_dir) / f"checkpoint-{trainer.state.global_step}"


def summary(trainer: Any, output: Any, callback: ReporterCallback) -> dict[str, Any]:
    """What every training job returns (JSON-serialisable)."""
    history = [h for h in trainer.state.log_history if "loss" in h]
    metrics = dict(getattr(output, "metrics", {}) or {})
    return {
        "global_step": int(trainer.state.global_step),
        "final_checkpoint": str(final_checkpoint(trainer)),
        "checkpoints": [c["path"] for c in callback.checkpoints],
        "first_loss": history[0]["loss"] if history else None,
        "last_loss": history[-1]["loss"] if history else None,
        "train_runtime": metrics.get("train_runtime"),
        "tokens_per_second": callback.last_logs.get("tokens_per_second"),
        "is_adapter": callback.is_adapter,
    }


def train_and_summarise(
    reporter: Reporter,
    setup: DeviceSetup,
    run_config: dict[str, Any],
    build_trainer: Callable[..., Any],
    *,
    is_adapter: bool,
    what: str,
    details: str = "",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The common end of a TRL run: the trainer `build_trainer(output_dir=, setup=, callbacks=)`
    (a build_*_trainer with its other arguments bound) with the reporter's output directory and a
    ReporterCallback, the log "`what`, N of M parameters trained`details`", the run config in the
    output directory, fit (continuing from resume_checkpoint), and summary() with `extra`,
    parameters_trained and the precision it trained at."""
    resume = resume_checkpoint(reporter)
    callback = ReporterCallback(reporter, run_config, is_adapter=is_adapter)
    trainer = build_trainer(output_dir=reporter.output_dir, setup=setup, callbacks=[callback])
    trainable, total = count_parameters(trainer.model)
    reporter.log(f"{what}, {trainable:,} of {total:,} parameters trained{details}")
    if setup.is_main:
        write_run_config(reporter.output_dir, run_config)
    output = fit(trainer, callback, resume)
    return {
        **summary(trainer, output, callback),
        **(extra or {}),
        "parameters_trained": trainable,
        "precision": setup.precision,  # the run page shows it beside the asked config
    }
