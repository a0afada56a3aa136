"""What a training config allows across `processes` (data parallel under accelerate / torchrun):
one home for the rules that the web app checks before a job is queued and that a run checks again
when it starts under a launcher (training.grpo.session.parallel_setup)."""

from __future__ import annotations

from typing import Any


def process_problems(config: Any, processes: int) -> list[str]:
    """Why `config` cannot run in `processes` processes (empty when it can): for GRPO at least one
    group per process and no in-process vLLM engine (it serves one process); for SFT and DPO at
    least one per-device batch per process in each global batch (more would train on a larger
    batch than asked)."""
    if processes <= 1:
        return []
    problems = []
    secrets = getattr(config, "secrets_per_step", processes)
    if secrets < processes:
        problems.append(
            f"secrets_per_step={secrets} leaves a process without a group: "
            f"use at most {secrets} processes"
        )
    per_device = getattr(config, "per_device_batch_size", 0)
    if per_device and per_device * processes > config.global_batch_size:
        problems.append(
            f"global_batch_size={config.global_batch_size} is less than per_device_batch_size="
            f"{per_device} × {processes} processes: use per_device_batch_size at most "
            f"{max(1, config.global_batch_size // processes)} (or fewer processes)"
        )
    if getattr(config, "rollout_backend", "") == "vllm":
        problems.append("rollout_backend=vllm runs its engine inside one process: use 1 process")
    return problems
