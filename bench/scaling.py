"""GRPO past one process, measured on this machine's CPU with the tiny model (issue 35).

    python -m bench.scaling [--steps 5] [--secrets 4] [--generations 4] [--turns 3]

Three runs of `python -m training.grpo`, the same global batch (`--secrets` groups of
`--generations` games per step), each measured in one run:
- `one_process` and `two_processes` (torchrun, gloo; groups dealt to ranks): GRPO steps per
  minute from the runs' own `time/step_s` (model loading and process start excluded) and from
  wall time;
- `local` (the one-process run) and `server` (`rollout_backend=server` against
  `python -m training.grpo.standin_server` in its own process): the rollout share of step time,
  `time/rollout_s / time/step_s`, and the adapter push of the server run (`time/weight_sync_s`).
Prints one JSON object (also written to bench/results/scaling.json) with the formulas for how step
time should scale with N GPUs and a separate generation GPU, and what limits it. The load
average is reported: on a small shared CPU, two processes compete for the same cores, so the
CPU numbers show the overheads, not a GPU speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "scaling.json"
WORDS = ["dog", "cat", "apple", "table", "chair", "horse", "bread", "river"]

FORMULAS = {
    "data_parallel": (
        "T_step(N) ≈ T_roll(1)/N + T_update(1)/N + T_gather(N) + T_allreduce(N) + T_serial, "
        "where T_roll is lock-step generation plus judging of the step's groups (a rank plays "
        "⌈S/N⌉ of S groups, so N > S leaves GPUs idle and uneven games make the slowest rank "
        "the step's), T_update the forward/backward over the step's rows, T_gather the "
        "all-gather of the played games (JSON, small), T_allreduce ≈ 2·(N−1)/N · P·b / B_link "
        "per optimizer step for P trained parameters of b bytes (LoRA: MBs, negligible; full "
        "fine-tuning: the model's size per mini-batch), and T_serial what rank 0 does alone "
        "(rewards and advantages over all games, metrics, checkpoints). Speed-up "
        "= T_step(1)/T_step(N) ≤ N, Amdahl-bounded by T_serial."
    ),
    "generation_server": (
        "T_step(N, server) ≈ T_gen(G) + T_judge + T_push + T_update(1)/N + T_allreduce(N) + "
        "T_serial: rollouts leave the N training GPUs for G generation GPUs (T_gen shrinks "
        "with G and vLLM's continuous batching of all ranks' requests), at the cost of "
        "T_push = save adapter + the server's /v1/load_lora_adapter (≈ adapter bytes / disk "
        "bandwidth + load, tens of ms for LoRA) per update. On-policy GRPO waits for each "
        "step's rollouts before its update, so generation and training alternate rather than "
        "overlap: the training GPUs idle during T_gen and the generation GPU during T_update; "
        "the win is that each side runs the engine that suits it (vLLM's paged KV cache and "
        "batching for decode) and that the trainer's GPUs need no inference memory."
    ),
    "limits": [
        "multi-turn lock-step: a turn waits for every live game's question and the judge's "
        "answers, so the longest game of a rank sets its rollout time",
        "groups per rank: a secret's G games stay on one rank (per-turn normalisation), so "
        "N ≤ secrets_per_step and balance needs secrets_per_step a multiple of N",
        "the judge: an LLM judge on the trainer's GPUs is serial work per turn unless it too "
        "is served",
        "rank 0's serial work and checkpoints (Amdahl), and the gradient all-reduce when "
        "training every weight",
        "with a server: one adapter push per update and an HTTP round trip per question; "
        "the server must serve the policy's base model",
    ],
}


def grpo(base: Path, words: Path, out: Path, flags: dict, processes: int) -> tuple[list, float]:
    """Run GRPO; (rank 0's metrics records, wall seconds)."""
    args = ["--base", str(base), "--out", str(out), "--word-list", str(words)]
    args += [f"--{k}={v}" for k, v in flags.items()]
    launcher = [sys.executable, "-m", "training.grpo"]
    if processes > 1:
        launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
        launcher += [f"--nproc_per_node={processes}", "-m", "training.grpo"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    began = time.perf_counter()
    done = subprocess.run(
        [*launcher, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600
    )
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    records = [json.loads(x) for x in done.stderr.splitlines() if x.startswith("{")]
    return [r for r in records if r.get("event") == "metrics" and "time/step_s" in r], wall


def summary(metrics: list, wall: float) -> dict:
    """Means over the steps after the first (its first forwards warm the allocator and caches)."""
    metrics = metrics[1:] if len(metrics) > 1 else metrics
    steps = [m["time/step_s"] for m in metrics]
    share = [m["time/rollout_s"] / m["time/step_s"] for m in metrics]
    out = {
        "steps": len(metrics),
        "step_s_mean": statistics.fmean(steps),
        "steps_per_minute": 60 * len(steps) / sum(steps),
        "steps_per_minute_wall": 60 * (len(steps) + 1) / wall,
        "rollout_s_mean": statistics.fmean(m["time/rollout_s"] for m in metrics),
        "update_s_mean": statistics.fmean(m["time/update_s"] for m in metrics),
        "rollout_share": statistics.fmean(share),
        "wall_s": wall,
    }
    if "time/weight_sync_s" in metrics[0]:
        out["weight_sync_s_mean"] = statistics.fmean(m["time/weight_sync_s"] for m in metrics)
    return out


def start_server(model: Path, log: Path):
    command = [sys.executable, "-m", "training.grpo.standin_server", "--model", str(model)]
    command += ["--port", "0", "--threads", "1"]
    env = {**os.environ, "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log.open("w"), text=True
    )
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        raise RuntimeError(f"the stand-in server did not start: {log.read_text()[-2000:]}")
    return proc, line.split()[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scaling", description=__doc__)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--secrets", type=int, default=4)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args(argv)
    from training.tiny import build_tiny_model

    flags = {
        "steps": args.steps,
        "secrets-per-step": args.secrets,
        "num-generations": args.generations,
        "max-turns": args.turns,
        "max-completion-length": 8,
        "belief-coef": 0.0,
        "num-iterations": 1,
        "mini-batches": 1,
        "lora-rank": 8,
        "cpu-threads": 1,
        "save-steps": args.steps,
        "seed": 0,
    }
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = build_tiny_model(tmp / "model", hidden=64, intermediate=128, seed=0)
        words = tmp / "words.txt"
        words.write_text("\n".join(WORDS) + "\n")
        one = summary(*grpo(model, words, tmp / "one", flags, 1))
        two = summary(*grpo(model, words, tmp / "two", flags, 2))
        proc, url = start_server(model, tmp / "server.log")
        try:
            server_flags = {**flags, "rollout-backend": "server", "rollout-server": url}
            server = summary(*grpo(model, words, tmp / "server", server_flags, 1))
        finally:
            proc.kill()
            proc.wait()
    result = {
        "benchmark": "grpo_scaling_cpu",
        "setup": {
            "model": "tiny Llama (64 hidden, 128 intermediate), LoRA r 8, fp32, 1 thread/process",
            "global_batch": f"{args.secrets} secrets × {args.generations} games, "
            f"{args.turns} turns, 8 tokens per question",
            "steps_per_run": args.steps,
            "cpu_cores": os.cpu_count(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "note": "each configuration measured in one run; steps_per_minute from the runs' "
            "time/step_s over the steps after the first (warm-up), _wall counts every step and "
            "includes process start and model loading; "
            "the 2 processes share the machine's cores with each other (and other work), so "
            "the CPU shows the data-parallel overheads, not a GPU speed-up; the server run's "
            "generation is the stand-in (transformers on 1 thread, one HTTP request per "
            "question, a 20 ms batching window per turn) on the same CPU as the trainer, not "
            "vLLM on its own GPU, so its rollout share measures the protocol's cost here, not "
            "the gain of a generation GPU",
        },
        "steps_per_minute": {
            "one_process": one["steps_per_minute"],
            "two_processes": two["steps_per_minute"],
            "speedup": two["steps_per_minute"] / one["steps_per_minute"],
        },
        "rollout_share_of_step_time": {
            "local": one["rollout_share"],
            "server": server["rollout_share"],
        },
        "runs": {"one_process": one, "two_processes": two, "server": server},
        "formulas": FORMULAS,
    }
    text = json.dumps(result, indent=2, ensure_ascii=False)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
