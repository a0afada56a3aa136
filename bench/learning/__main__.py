"""`python -m bench.learning [--quick] [--resume] [--until STAGE] [--set FIELD=VALUE] [--table]`;
`--base smollm2-135m-instruct [--device cuda]` runs the pretrained-base world (bench.learning.smol)
instead of the knowledge-base miniature."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import RESULTS_DIR, argument_parser, report
from bench.learning.scale import QUICK, Scale, with_settings

RESULTS = RESULTS_DIR / "learning.json"
SMOL_RESULTS = RESULTS_DIR / "learning-smollm2-cpu.json"  # -cuda.json for --device cuda


def cpu_model() -> str:
    """The CPU's model name and widest vector unit: wall times differ ~3× between machines here."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    name = next(
        (
            line.split(":", 1)[1].strip()
            for line in info.splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    flags = next(
        (line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")),
        [],
    )
    vector = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "other"
    return f"{name} ({vector})"


class Stages:
    """Runs stages once: each result (and the seconds it took) is stored in the work folder, and
    `--resume` takes a stored one instead of running it again, when the settings are the same."""

    def __init__(self, work: Path, scale: Scale, resume: bool):
        self.work, self.resume, self.seconds = work, resume, {}
        self.reused: list[str] = []
        fingerprint = work / "scale.json"
        if (
            resume
            and fingerprint.is_file()
            and json.loads(fingerprint.read_text()) != scale.to_dict()
        ):
            raise SystemExit(
                f"--resume: {work} holds a run with other settings; use another --work"
            )
        fingerprint.write_text(json.dumps(scale.to_dict(), indent=1))

    def __call__(self, name: str, fn: Callable, *args, **kwargs) -> Any:
        stored = self.work / f"stage-{name}.json"
        if self.resume and stored.is_file():
            value, self.seconds[name] = json.loads(stored.read_text())
            self.reused.append(name)
            return value
        started = time.perf_counter()
        value = fn(*args, **kwargs)
        self.seconds[name] = round(time.perf_counter() - started, 1)
        stored.write_text(json.dumps([value, self.seconds[name]]))
        print(
            json.dumps({"stage": name, "seconds": self.seconds[name], "load": os.getloadavg()[0]}),
            file=sys.stderr,  # progress; stdout is the results' JSON alone
            flush=True,
        )
        return value


def pipeline(scale: Scale, stage: Stages, until: str | None) -> dict[str, Any]:
    """world → tiny model → knowledge → per seed: SFT, StarPO, CIA, each evaluated on the test
    and validation secrets (and GRPO's own secrets); then the ordering over seeds."""
    from bench.learning.evaluate import evaluate, naming_probe
    from bench.learning.ordering import run_arms
    from bench.learning.stages import run_grpo, run_knowledge, run_sft, write_words
    from bench.learning.world import make_world
    from games.judges.kb import KBJudge
    from training.tiny import build_tiny_model

    work = stage.work
    judge = KBJudge(closed=True)  # the miniature's world is the KB's: every fact it lacks is a No
    world = stage("world", make_world, scale)
    out: dict[str, Any] = {
        "world": {k: len(v) for k, v in world.items()} | {"test_words": world["test"][:20]}
    }
    tiny = stage(
        "tiny",
        lambda: str(
            build_tiny_model(
                work / "tiny",
                hidden=scale.hidden,
                layers=scale.layers,
                heads=4,
                kv_heads=4,
                intermediate=scale.intermediate,
                vocab_size=scale.vocab,
                seed=scale.world_seed,
            )
        ),
    )
    knowledge, out["knowledge"] = stage(
        "knowledge", run_knowledge, scale, work, tiny, write_words(work / "pool.txt", world["pool"])
    )
    probe_words = world["test"][:40]
    out["knowledge"]["naming_probe_test"] = stage(
        "probe-knowledge", naming_probe, knowledge, probe_words, world["pool"], judge, scale
    )
    if until == "knowledge":
        return out

    def sft(seed: int) -> tuple[str, dict]:
        model, info = stage(f"sft-s{seed}", run_sft, scale, work, knowledge, world, seed)
        info["naming_probe_test"] = stage(
            f"probe-sft-s{seed}", naming_probe, model, probe_words, world["pool"], judge, scale
        )
        return model, info

    def grpo(sft_model: str, arm: str, seed: int) -> tuple[str, dict]:
        return run_grpo(scale, work, sft_model, world, judge, arm, seed)

    def ev(name: str, model: str, split: str, samples: int) -> dict:
        return stage(
            f"eval-{name}-{split}",
            evaluate,
            model,
            world[split],
            world["pool"],
            judge,
            scale,
            samples=samples,
            temperature=scale.eval_temperature,
        )

    def evaluations(name: str, model: str, seed: int) -> dict:
        return {
            "test": ev(name, model, "test", scale.eval_samples),
            "val": ev(name, model, "val", scale.eval_samples),
            "rl": ev(name, model, "rl", scale.rl_eval_samples),
        }

    return out | run_arms(
        stage,
        scale.seed_list,
        world,
        sft=sft,
        grpo=grpo,
        evaluate=evaluations,
        until=until,
        sft_stage="sft-s{seed}",
    )


def table(results: dict) -> str:
    """The README's table, from the results file."""
    runs, order = results["runs"], results["ordering"]
    seeds = order["seeds"]
    rows = [
        "| test secrets (mean over seeds) | success (mean@8, T=1) | strict success "
        "| valid questions | bits gained | reached ≤ 2 "
        "| difference (paired 95% CI over words and seeds) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    names = {"sft": "SFT", "starpo": "StarPO (trajectory)", "cia": "CIA (per turn, ΔBelief)"}
    diffs = {"starpo": "starpo_minus_sft", "cia": "cia_minus_starpo"}

    def mean(arm: str, key: str, field: str = "rate") -> float:
        values = [runs[arm][str(s)]["test"][key] for s in seeds]
        return sum(v[field] if isinstance(v, dict) else v for v in values) / len(values)

    for arm, label in names.items():
        diff = order["paired"].get(diffs.get(arm, ""), None)
        note = (
            (
                f"{diffs[arm].replace('_minus_', ' − ')}: {100 * diff['mean']:+.1f} "
                f"[{100 * diff['ci95'][0]:+.1f}, {100 * diff['ci95'][1]:+.1f}]"
            )
            if diff
            else ""
        )
        rows.append(
            f"| {label} | {100 * order['arms'][arm]['success']:.1f}% "
            f"({', '.join(f'{100 * v:.1f}' for v in order['arms'][arm]['per_seed'])}) | "
            f"{100 * results['ordering_strict']['arms'][arm]['success']:.1f}% | "
            f"{100 * mean(arm, 'valid_questions'):.1f}% | {mean(arm, 'bits_gained', None):.2f} of "
            f"{runs[arm][str(seeds[0])]['test']['bits_available']:.2f} | "
            f"{100 * mean(arm, 'reached_2_candidates'):.1f}% | {note} |"
        )
    cia_sft = order["paired"]["cia_minus_sft"]
    rows.append(
        f"\nCIA − SFT: {100 * cia_sft['mean']:+.1f} [{100 * cia_sft['ci95'][0]:+.1f}, "
        f"{100 * cia_sft['ci95'][1]:+.1f}] points; {order['test_words']} test words, seeds {seeds}."
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser("bench.learning", __doc__)
    parser.add_argument(
        "--quick", action="store_true", help="a smoke-sized run (does not write the results file)"
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(os.environ.get("DATA_DIR", "var")) / "bench-learning",
        help="folder for models, checkpoints and stored stage results",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="take every stage stored in --work instead of rerunning",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="FIELD=VALUE", help="override a Scale field"
    )
    parser.add_argument(
        "--until",
        help="stop after this stage: knowledge, sft-sN or seed-N (a pilot: no results file)",
    )
    parser.add_argument(
        "--table", action="store_true", help="print the README table of the results file and exit"
    )
    parser.add_argument(
        "--base",
        choices=("smollm2-135m-instruct",),
        help=(
            "the pretrained-base world: the paper's word lists, SFT data and judge "
            "(bench.learning.smol; results in learning-smollm2-DEVICE.json); until: sft or seed-N"
        ),
    )
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="with --base: cpu, the miniature, or cuda, the full study (bench.learning.smol.CUDA)",
    )
    args = parser.parse_args(argv)
    if args.table:
        print(table(json.loads(RESULTS.read_text(encoding="utf-8"))))
        return 0

    import torch

    if args.base:
        from bench.learning.smol import CUDA, SmolScale, smol_pipeline

        scale = with_settings(CUDA if args.device == "cuda" else SmolScale(), args.set)
        run_pipeline = smol_pipeline
        results = SMOL_RESULTS.with_name(f"learning-smollm2-{args.device}.json")
    else:
        scale = with_settings(QUICK if args.quick else Scale(), args.set)
        run_pipeline, results = pipeline, RESULTS
    torch.set_num_threads(scale.threads)
    args.work.mkdir(parents=True, exist_ok=True)
    stage = Stages(args.work, scale, args.resume)
    began = time.perf_counter()
    out: dict[str, Any] = {
        "scale": scale.to_dict(),
        "load_average_start": list(os.getloadavg()),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
    }
    out |= {
        "world_name": getattr(scale, "world", "kb-miniature"),
        "device": getattr(scale, "device", "cpu"),
        # settings chosen by comparing runs on validation words: none yet in either world (the
        # miniature's came from pilots, the pretrained base's are a priori)
        "validation_choices": {},
    }
    out |= run_pipeline(scale, stage, args.until)
    out["seconds"] = stage.seconds | {
        "total": round(sum(stage.seconds.values()), 1),
        "this_process": round(time.perf_counter() - began, 1),
    }
    out["reused_stages"] = stage.reused
    out["under_90_minutes"] = out["seconds"]["total"] < 90 * 60
    out["load_average_end"] = list(os.getloadavg())
    for seeds in out.get("runs", {}).values():  # per-word rates served the paired differences
        for run in seeds.values():
            for split, stats in run.items():  # val and rl (miniature), val and test_check (smol)
                if split not in ("test", "training"):
                    for key in ("per_word", "strict_per_word", "bits_per_word"):
                        stats.pop(key, None)
    report(out, None if args.quick or args.until else results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
