"""GRPO checkpoints: the policy (adapter or full weights), optimizer, collapse monitor and the
resolved config, saved each `save_steps` and restored on resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from training.common.models import load_model, lora_config
from training.common.trainer import write_run_config
from training.grpo.config import GRPOConfig
from training.grpo.diagnostics import CollapseMonitor

STATE_FILE = "trainer_state.json"  # training.common.trainer.resume_checkpoint looks for it
OPTIMIZER_FILE = "optimizer.pt"


def save_checkpoint(
    folder: Path,
    *,
    model: Any,
    tokenizer: Any,
    optimizer: Any,
    step: int,
    monitor: CollapseMonitor,
    run_config: dict,
    history: list[dict],
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)  # a peft model saves only its adapter
    tokenizer.save_pretrained(folder)
    torch.save(optimizer.state_dict(), folder / OPTIMIZER_FILE)
    write_run_config(folder, {**run_config, "step": step})
    state = {"global_step": step, "monitor": monitor.state(), "history": history[-200:]}
    (folder / STATE_FILE).write_text(json.dumps(state, default=float) + "\n", encoding="utf-8")
    return folder


def load_policy(config: GRPOConfig, base_path: str, resume: str | None):
    """(model, tokenizer): the base with a fresh or resumed LoRA adapter, or full weights."""
    if config.lora:
        from peft import PeftModel, get_peft_model

        model, tokenizer = load_model(base_path)
        if resume:
            return PeftModel.from_pretrained(model, resume, is_trainable=True), tokenizer
        return get_peft_model(model, lora_config(config)), tokenizer
    return load_model(resume or base_path)


def restore(folder: str, optimizer: Any, monitor: CollapseMonitor) -> tuple[int, list[dict]]:
    """Load the optimizer and monitor state saved in `folder`: (its step, the metric history)."""
    optimizer.load_state_dict(torch.load(Path(folder) / OPTIMIZER_FILE, weights_only=True))
    state = json.loads((Path(folder) / STATE_FILE).read_text(encoding="utf-8"))
    monitor.load(state.get("monitor"))
    return int(state["global_step"]), list(state.get("history", []))
