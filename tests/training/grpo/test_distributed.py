"""GRPO across processes on the CPU (torchrun, gloo): two processes × two groups each take the
same update as one process × four groups, log the same metrics, and a run saved by two processes
resumes in one (issue 35)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from training.grpo.distributed import Ranks

ROOT = Path(__file__).resolve().parents[3]
WORDS = ["dog", "cat", "apple", "table"]
FLAGS = {
    "secrets-per-step": 4,  # four groups: two per process
    "num-generations": 2,
    "max-turns": 2,
    "max-completion-length": 6,
    "temperature": 1.0,
    "learning-rate": 3e-3,
    "save-steps": 1,
    "rollout-filter-ratio": 1.0,
    "num-iterations": 2,
    "mini-batches": 2,
    "beta": 0.04,
    "lora-rank": 4,
    "cpu-threads": 1,
    "forward-batch-size": 1,
    "val-secrets": 0,  # no validation games (the paper's default plays dbrl/paper_val)
    "seed": 3,
}
SAME = (
    "reward",
    "success_rate",
    "mean_turns",
    "completions/mean_length",
    "belief/delta_mean",
    "filter/kept_games",
    "loss",
    "entropy",
    "kl",
    "grad_norm",
    "clip_ratio/region_mean",
    "logprob_diff/rollout_abs_mean",
    "train/action_tokens",
    "train/optimizer_steps",
)


def _grpo(base: Path, out: Path, words: Path, steps: int, processes: int) -> list[dict]:
    """Run `python -m training.grpo` (under torchrun with `processes` > 1); rank 0's metrics."""
    flags = [f"--{k}={v}" for k, v in {**FLAGS, "steps": steps}.items()]
    args = ["--base", str(base), "--out", str(out), "--word-list", str(words), *flags]
    launcher = (
        [sys.executable, "-m", "training.grpo"]
        if processes == 1
        else [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={processes}",
            "-m",
            "training.grpo",
        ]
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    done = subprocess.run(
        [*launcher, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    records = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    return [r for r in records if r.get("event") == "metrics"]


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(folder / "adapter_model.safetensors")


def _same_step(want: dict, got: dict, rel: float = 1e-4) -> None:
    assert want["step"] == got["step"]
    for key in SAME:
        assert got[key] == pytest.approx(want[key], rel=rel, abs=1e-5), (want["step"], key)


@pytest.mark.slow
def test_two_processes_take_the_one_process_step_and_resume_in_one(grpo_tiny_dir, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("\n".join(WORDS) + "\n")
    one = _grpo(grpo_tiny_dir, tmp_path / "one", words, steps=2, processes=1)
    two = _grpo(grpo_tiny_dir, tmp_path / "two", words, steps=1, processes=2)
    assert [m["step"] for m in one] == [1, 2] and [m["step"] for m in two] == [1]
    _same_step(one[0], two[0])
    a = _weights(tmp_path / "one" / "checkpoint-1")
    b = _weights(tmp_path / "two" / "checkpoint-1")
    start = _weights(tmp_path / "one" / "checkpoint-2")
    assert a.keys() == b.keys() and any(not torch.equal(a[k], start[k]) for k in a)
    for key in a:  # the update moved the weights, and both runs moved them alike
        torch.testing.assert_close(b[key], a[key], rtol=1e-4, atol=1e-6)
    run = json.loads((tmp_path / "two" / "checkpoint-1" / "training_config.json").read_text())
    assert run["resolved"]["processes"] == 2

    # the two-process run's checkpoint resumes in one process: step 2 as the straight run's (the
    # sums' order differs between the runs, and a second Adam step amplifies that a little)
    resumed = _grpo(grpo_tiny_dir, tmp_path / "two", words, steps=2, processes=1)
    assert [m["step"] for m in resumed] == [2]
    _same_step(one[1], resumed[0], rel=1e-3)
    c = _weights(tmp_path / "two" / "checkpoint-2")
    for key in start:
        torch.testing.assert_close(c[key], start[key], rtol=1e-3, atol=1e-4)


def test_groups_are_dealt_round_robin_and_one_process_owns_all():
    ranks = Ranks.__new__(Ranks)
    ranks.world, ranks.rank = 2, 1
    assert [g for g in range(5) if ranks.owns(g)] == [1, 3]
    alone = Ranks()
    assert all(alone.owns(g) for g in range(5))
    played = alone.play_shared([0, 0, 1, 1], lambda mine: [f"game {i}" for i in mine])
    assert played == ["game 0", "game 1", "game 2", "game 3"]
