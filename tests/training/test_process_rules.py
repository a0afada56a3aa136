"""The rules of a config across processes have one home (training.common.processes): the web
app's check before a job is queued and a GRPO run's own check under a launcher say the same."""

from __future__ import annotations

import pytest

from training.common.processes import process_problems
from training.grpo.config import GRPOConfig
from training.grpo.session import parallel_setup
from training.sft.config import SFTJobConfig


def test_one_process_has_no_problems():
    assert process_problems(GRPOConfig(secrets_per_step=1, rollout_backend="vllm"), 1) == []


def test_grpo_needs_a_group_per_process_and_no_in_process_engine():
    config = GRPOConfig(secrets_per_step=2, rollout_backend="vllm")
    problems = process_problems(config, 4)
    assert problems == [
        "secrets_per_step=2 leaves a process without a group: use at most 2 processes",
        "rollout_backend=vllm runs its engine inside one process: use 1 process",
    ]
    assert process_problems(GRPOConfig(secrets_per_step=4), 4) == []


def test_sft_needs_a_per_device_batch_per_process():
    config = SFTJobConfig(global_batch_size=8, per_device_batch_size=8)
    assert process_problems(config, 2) == [
        "global_batch_size=8 is less than per_device_batch_size=8 × 2 processes: use "
        "per_device_batch_size at most 4 (or fewer processes)"
    ]
    assert process_problems(SFTJobConfig(global_batch_size=16, per_device_batch_size=8), 2) == []


def test_a_grpo_run_under_a_launcher_refuses_what_the_web_app_refuses(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "4")
    with pytest.raises(ValueError, match="secrets_per_step=2 leaves a process without a group"):
        parallel_setup(GRPOConfig(secrets_per_step=2, precision="float32"))
    assert parallel_setup(GRPOConfig(secrets_per_step=4, precision="float32")).world_size == 4
