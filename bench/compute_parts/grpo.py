"""A GRPO step (rollout + update) of the platform's own trainer, today's path against each
change and all of them: `grpo_step_part` for bench.compute. Prints nothing.

Each variant is a process of its own (accelerate's state is one per process, and a bf16 run's
mixed precision cannot be switched off in the same one) that builds the run's session
(training.grpo.session.open_session, as `training.grpo.trainer.run` does) and waits; the parent
asks them in turn for one step each, round after round, so only one runs at a time and every
variant plays the same steps' secrets with the same seeds. Today's path is put back where the
code has changed: float32, LoRA dropout 0.05, LoRA unmerged while playing, the fixed 128 MB
prefix cache, and the first mini-batch's old-log-prob forward computed and thrown away.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any

# name: what differs from today's path
VARIANTS: dict[str, dict[str, Any]] = {
    "float32": {},
    "bfloat16": {"precision": "bfloat16"},
    "lora_dropout_0": {"lora_dropout": 0.0},
    "lora_merged": {"merge": True},
    "sized_cache": {"sized_cache": True},
    "no_discarded_forward": {"skip_forward": True},
    "all": {
        "precision": "bfloat16",
        "lora_dropout": 0.0,
        "merge": True,
        "sized_cache": True,
        "skip_forward": True,
    },
}
TODAY = {
    "precision": "float32",
    "lora_dropout": 0.05,
    "merge": False,
    "sized_cache": False,
    "skip_forward": False,
}
LEGACY_CACHE_MB = 128.0


def _legacy(settings: dict[str, Any]) -> None:
    """Put today's code back where `settings` say so (in this worker process only)."""
    import torch

    from training.grpo import rollouts, update

    if not settings["merge"]:
        rollouts.merge_for_rollouts = lambda model: False
    if not settings["sized_cache"]:
        rollouts.rollout_cache_mb = lambda *args, **kwargs: LEGACY_CACHE_MB
    if not settings["skip_forward"]:
        steps = update.Updater._steps

        def with_discarded_forward(self, minibatches, rows, inner_steps):
            if inner_steps > 1 and minibatches:  # computed, then replaced by the first pass's own
                with torch.no_grad():
                    for chunk in minibatches[0]:
                        self._logps(self.model, chunk)
            return steps(self, minibatches, rows, inner_steps)

        update.Updater._steps = with_discarded_forward


def release_freed_memory() -> None:
    """Hand the memory a step freed back to the system (glibc keeps it otherwise: seven idle
    variants held 5-8 GB each after their steps and ran a 24 GB machine out of memory)."""
    import ctypes
    import gc

    gc.collect()
    with suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _worker(connection, name: str, settings: dict[str, Any], shape: dict[str, Any]) -> None:
    import torch

    torch.set_num_threads(shape["threads"])
    _legacy(settings)
    from accelerate import Accelerator

    from training.common.models import cpu_threads, quiet_libraries, run_guesser_format
    from training.grpo.config import GRPOConfig
    from training.grpo.session import game_inputs, open_session, parallel_setup
    from training.grpo.trainer import step_metrics
    from training.reporting import ConsoleReporter

    quiet_libraries()
    config = GRPOConfig(
        base_model=shape["model"],
        judge=shape["judge"],
        word_list=shape["word_list"],
        secrets_per_step=shape["secrets"],
        num_generations=shape["generations"],
        max_turns=shape["turns"],
        max_completion_length=shape["question_tokens"],
        steps=shape["rounds"] + int(shape["warmup"]),
        lora=True,
        lora_dropout=settings["lora_dropout"],
        precision=settings["precision"],
        cpu_threads=shape["threads"],
        val_secrets=0,  # the step's compute alone: no validation games
        seed=0,
    )
    out = tempfile.mkdtemp(prefix=f"bench-grpo-{name}-")
    with open(os.devnull, "w") as quiet:
        reporter = ConsoleReporter(out, stream=quiet)
        setup = parallel_setup(config)
        accelerator = Accelerator(cpu=True, mixed_precision="bf16" if setup.bf16 else "no")
        chat_format, _ = run_guesser_format(
            config.guesser_prompt, None, config.base_model, max_turns=config.max_turns
        )
        games = game_inputs(config, reporter, None, None, None, None)
        with cpu_threads(shape["threads"]):
            session = open_session(
                config,
                reporter,
                accelerator,
                out=Path(out),
                base_path=config.base_model,
                chat_format=chat_format,
                resume=None,
                games=games,
            )
            connection.send({"ready": name, "precision": setup.precision})
            release_freed_memory()
            while (step := connection.recv()) is not None:
                metrics, _ = step_metrics(session, step, 0.0)  # validation off: val_secrets 0
                release_freed_memory()  # an idle variant holds its session, not a step's peak
                connection.send(
                    {
                        k: metrics.get(k)
                        for k in (
                            "time/step_s",
                            "time/rollout_s",
                            "time/update_s",
                            "train/sequence_tokens",
                            "loss",
                            "success_rate",
                            "valid_rate",
                        )
                    }
                )


def grpo_step_part(
    *,
    quick: bool = False,
    model: str = "smollm2-135m-instruct",
    judge: str = "kb",
    word_list: str = "dbrl/train_rl",
    secrets: int = 4,
    generations: int = 4,
    turns: int = 3,
    question_tokens: int = 16,
    rounds: int = 1,
    warmup: bool = False,
    threads: int = 0,
    variants: tuple[str, ...] = tuple(VARIANTS),
) -> dict[str, Any]:
    """Seconds per GRPO step of each variant, `rounds` timed steps each (after one untimed
    warm-up step with `warmup`), round-robin; `speedup` = today's step time over all-together's.
    The default shape (4 secrets × 4 games, 3 questions of at most 16 tokens, SmolLM2 with the
    GRPO config's LoRA) keeps seven variants within minutes on two cores; the paper's step is
    240 × 16 games of 20 questions."""
    if quick:
        secrets, generations, turns, question_tokens, rounds = 2, 2, 3, 12, 1
    shape = {
        "model": model,
        "judge": judge,
        "word_list": word_list,
        "secrets": secrets,
        "generations": generations,
        "turns": turns,
        "question_tokens": question_tokens,
        "rounds": rounds,
        "warmup": warmup,
        "threads": threads or len(os.sched_getaffinity(0)),
    }
    context = multiprocessing.get_context("spawn")
    workers, pipes, resolved = {}, {}, {}
    try:
        for name in variants:
            parent, child = context.Pipe()
            process = context.Process(
                target=_worker, args=(child, name, {**TODAY, **VARIANTS[name]}, shape), daemon=True
            )
            process.start()
            workers[name], pipes[name] = process, parent
            resolved[name] = parent.recv()["precision"]  # built one after another: less memory
        times: dict[str, list[dict]] = {name: [] for name in variants}
        first = 1 + int(warmup)
        for step in range(1, first + rounds):
            for name in variants:
                pipes[name].send(step)
                reply = pipes[name].recv()
                if step >= first:
                    times[name].append(reply)
    finally:
        for pipe in pipes.values():
            with suppress(OSError, BrokenPipeError):
                pipe.send(None)
        for process in workers.values():
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    rows = {}
    for name, steps in times.items():
        step_s = statistics.median(s["time/step_s"] for s in steps)
        rows[name] = {
            "precision": resolved[name],
            "step_s": round(step_s, 2),
            "rollout_s": round(statistics.median(s["time/rollout_s"] for s in steps), 2),
            "update_s": round(statistics.median(s["time/update_s"] or 0.0 for s in steps), 2),
            "loss": steps[-1]["loss"],
            "sequence_tokens": steps[-1]["train/sequence_tokens"],
        }
    base = rows.get("float32", {}).get("step_s")
    for row in rows.values():
        row["speedup"] = round(base / row["step_s"], 3) if base and row["step_s"] else None
    result: dict[str, Any] = {"shape": shape, "variants": rows}
    if "all" in rows:
        result["speedup"] = rows["all"]["speedup"]
    return result
