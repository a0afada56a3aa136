"""`python -m bench.compute [--parts sft,grpo_step,generation,judge,lockstep] [--quick]
[--save]`: this machine's speed where models run (issue 43), printed as one JSON object.

Each part measures today's path (float32 and the code as it was), each change alone and all the
changes together, interleaved in one process on the same inputs (bench.compute_parts.*), so the
ratios hold on a shared, noisy machine; `speedups` holds all-together over today's path for SFT
(trained tokens/s on the paper's rows), a GRPO step (rollout + update), generation at batch 32
and the pretrained judge (answers/s), and a batch of games played in lock step (an evaluation)
with the prefix cache grown to hold it against its fixed 128 MB, with the loss and logit
differences beside them and the
load average before and after. `--save` also writes bench/results/compute.json. The docs'
performance page (docs/explanation/performance.md) explains the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import RESULTS_DIR, report

RESULTS = RESULTS_DIR / "compute.json"
PARTIAL = Path(__file__).resolve().parents[1] / "var" / "bench" / "compute-partial.json"
PARTS = ("sft", "grpo_step", "generation", "judge", "lockstep")


def machine() -> dict[str, Any]:
    import torch

    from games.precision import CPU_BF16_FLAGS, cpu_has_bf16, resolve

    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        info = ""
    name = next(
        (ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")),
        platform.processor() or "?",
    )
    flags = next(
        (ln.split(":", 1)[1].split() for ln in info.splitlines() if ln.startswith("flags")), []
    )
    return {
        "cpu": name,
        "cores": len(os.sched_getaffinity(0)),
        "bf16_flags": [f for f in CPU_BF16_FLAGS if f in flags],
        "cpu_has_bf16": cpu_has_bf16(),
        "auto_resolves_to": resolve("auto", "cpu"),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def sft_part(quick: bool, threads: int) -> dict[str, Any]:
    """SmolLM2 LoRA SFT on the paper's rows (bench.compute_parts.training), and teacher games
    per turn against packed one sequence per game (bench.compute_parts.sft_batching)."""
    from bench.compute_parts.sft_batching import sft_batching
    from bench.compute_parts.training import sft_variants

    if quick:
        out = sft_variants(rows=4, batch_size=2, steps=1, rounds=1, threads=threads)
        out["packing"] = sft_batching(rows=0, teacher_words=1, threads=threads)
    else:
        out = sft_variants(rows=8, batch_size=8, steps=1, rounds=1, threads=threads)
        out["packing"] = sft_batching(rows=0, teacher_words=3, threads=threads)
    out["headline"] = out["speedup"]
    return out


def grpo_step_part(quick: bool, threads: int) -> dict[str, Any]:
    from bench.compute_parts.grpo import grpo_step_part as measure

    out = measure(quick=quick, threads=threads)
    out["headline"] = out.get("speedup")
    return out


def generation_part(quick: bool, threads: int) -> dict[str, Any]:
    """Decoding with the KV cache at batch 1, 8, 32 and 64 (bench.compute_parts.generation);
    the headline is batch 32's decode tokens/s, all changes over today's path."""
    from bench.compute_parts.generation import generation_variants

    sizes = (1, 8) if quick else (1, 8, 32, 64)
    out = generation_variants(
        sizes, new_tokens=4 if quick else 16, repeats=1 if quick else 3, threads=threads
    )
    out["headline"] = out["decode_speedup_over_float32"]["all"].get("32")
    return out


def judge_part(quick: bool, threads: int) -> dict[str, Any]:
    """The pretrained judge's answers/s on validation pairs (bench.compute_parts.judge); the
    headline is the shipped (bf16) path over today's float32."""
    from bench.compute_parts.judge import judge_variants

    out = judge_variants(n_pairs=128 if quick else 1536, repeats=1 if quick else 3, threads=threads)
    out["headline"] = out["speedup"]["shipped"]
    return out


def lockstep_part(quick: bool, threads: int) -> dict[str, Any]:
    """SmolLM2 games played in lock step against the knowledge-base judge, as an evaluation job
    plays them (bench.compute_parts.generation.grpo_rollout_variants): the prefix cache at a
    fixed 128 MB against the same cache grown to hold the batch (the backend's default); the
    headline is the grown cache's speed over the fixed one."""
    from bench.compute_parts.generation import grpo_rollout_variants

    size = {"secrets": 2, "generations": 2, "max_turns": 3, "question_tokens": 8}
    if not quick:  # 32 games of 12 questions: ~0.75 GB of float32 keys and values by the end
        size = {"secrets": 4, "generations": 8, "max_turns": 12, "question_tokens": 24}
    out = grpo_rollout_variants(
        **size, repeats=1, threads=threads, variants=("float32", "grown_cache")
    )
    out["headline"] = out["speedup_over_float32"]["grown_cache"]
    return out


PART_FUNCTIONS: dict[str, Callable[[bool, int], dict[str, Any]]] = {
    "sft": sft_part,
    "grpo_step": grpo_step_part,
    "generation": generation_part,
    "judge": judge_part,
    "lockstep": lockstep_part,
}
SPEEDUP_KEYS = {
    "sft": "sft",
    "grpo_step": "grpo_step",
    "generation": "generation_b32",
    "judge": "judge",
    "lockstep": "lockstep_cache",
}


def _run_part(name: str, quick: bool, threads: int, out: str) -> None:
    import torch

    torch.set_num_threads(threads)
    Path(out).write_text(json.dumps(PART_FUNCTIONS[name](quick, threads)), encoding="utf-8")


def part_in_own_process(name: str, quick: bool, threads: int) -> dict[str, Any]:
    """One part in a fresh process, so what a part leaves in memory (an SFT part's trainers keep
    about 15 GB) is returned before the next starts (together they ran a 24 GB machine out of
    memory)."""
    import multiprocessing
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / f"{name}.json")
        process = multiprocessing.get_context("spawn").Process(
            target=_run_part, args=(name, quick, threads, out)
        )
        process.start()
        process.join()
        if process.exitcode != 0:
            raise RuntimeError(f"the {name} part failed (exit code {process.exitcode})")
        return json.loads(Path(out).read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.compute", description=__doc__)
    parser.add_argument(
        "--parts", default=",".join(PARTS), help="comma-separated: " + ", ".join(PARTS)
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = every core)")
    parser.add_argument("--save", action="store_true", help=f"also write {RESULTS}")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="with --save: keep the saved file's parts (and speedups) this run does not measure",
    )
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; use {', '.join(PARTS)}")
    import torch

    torch.set_num_threads(args.threads or len(os.sched_getaffinity(0)))
    result: dict[str, Any] = {
        "command": " ".join(["python -m bench.compute", *(sys.argv[1:] if argv is None else argv)]),
        "machine": machine(),
        "load_average_start": list(os.getloadavg()),
    }
    began = time.perf_counter()
    threads = torch.get_num_threads()
    measured = {}
    for name in parts:
        started = time.perf_counter()
        measured[name] = (
            PART_FUNCTIONS[name](args.quick, threads)
            if len(parts) == 1
            else part_in_own_process(name, args.quick, threads)
        )
        measured[name]["seconds"] = round(time.perf_counter() - started, 1)
        PARTIAL.parent.mkdir(parents=True, exist_ok=True)  # a later part's crash loses nothing
        PARTIAL.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
    result["speedups"] = {SPEEDUP_KEYS[name]: measured[name].pop("headline") for name in parts}
    result.update(measured)
    result["load_average_end"] = list(os.getloadavg())
    result["seconds"] = round(time.perf_counter() - began, 1)
    if args.save and args.merge and RESULTS.is_file():
        result = merged(json.loads(RESULTS.read_text(encoding="utf-8")), result, parts)
    report(result, RESULTS if args.save else None)
    return result


def merged(saved: dict[str, Any], new: dict[str, Any], parts: list[str]) -> dict[str, Any]:
    """`new` with the parts of `saved` it did not measure (and their speedups), each part
    keeping the machine and load of its own run under `runs`."""
    out = dict(new)
    kept = [p for p in PARTS if p in saved and p not in parts]
    for name in kept:
        out[name] = saved[name]
    out["speedups"] = {
        SPEEDUP_KEYS[p]: (new if p in parts else saved)["speedups"][SPEEDUP_KEYS[p]]
        for p in PARTS
        if p in parts or (p in kept and SPEEDUP_KEYS[p] in saved.get("speedups", {}))
    }
    runs = dict(saved.get("runs", {}))
    for name in parts:
        runs[name] = {k: new[k] for k in ("command", "load_average_start", "load_average_end")}
    for name in kept:
        runs.setdefault(name, {k: saved.get(k) for k in ("command", "load_average_start")})
    out["runs"] = runs
    return out


if __name__ == "__main__":
    main()
