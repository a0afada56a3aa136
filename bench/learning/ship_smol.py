"""Ship a guesser of the pretrained-base world (`bench.learning --base smollm2-135m-instruct`) for
people to play: `python -m bench.learning.ship_smol --work var/bench-smol [--arm sft]`.

Writes games/data/models/<name>/: the LoRA adapter in float16 (the base comes from its wheel via
`make setup`), the run's training_config.json (the prompt it was trained with), guesser.json (how
it plays, its base, provenance and held-out results) and MODEL_CARD.md; its evaluation games on
the paper's test words go to games/data/models/evaluation/ with an entry in evaluation.json, so
the seed registers it as a guesser (webapp.catalog.shipped) and puts it on the boards.

Only the SFT arm ships for now: a GRPO arm's adapter sits on the SFT weights merged into the base
(two adapters), which the shipped layout does not describe yet.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from bench.learning.smol import SmolScale
from training.shipping import index_snapshot, save_adapter_fp16

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "games" / "data" / "models"


def stored(work: Path, stage: str):
    return json.loads((work / f"stage-{stage}.json").read_text(encoding="utf-8"))[0]


def results_of(evaluation: dict) -> dict:
    """guesser.json's `results.cli` (what the catalog reads) from an evaluation stage."""
    return {
        "success_rate": evaluation["success"]["rate"],
        "success_ci95": evaluation["success"]["ci95"],
        "n_words": evaluation["success"]["words"],
        "n_games": evaluation["success"]["games"],
        "strict_success_rate": evaluation["strict_success"]["rate"],
        "strict_success_ci95": evaluation["strict_success"]["ci95"],
        "valid_questions": evaluation["valid_questions"]["rate"],
        "mean_turns": evaluation["mean_turns"],
        "judge": evaluation["judge"],
        "sampling": evaluation["sampling"],
    }


def model_card(name: str, settings: dict, scale: dict, sft: dict, check: dict | None) -> str:
    cli, p = settings["results"]["cli"], settings["provenance"]

    def pct(rate: float, ci: list[float]) -> str:
        return f"{100 * rate:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"

    lines = [
        f"# {name}",
        "",
        f"{settings['base']} (SmolLM2-135M-Instruct, Apache-2.0, built from its wheel by "
        "`make setup`) with a LoRA adapter trained here by SFT on the ΔBelief-RL paper's own SFT "
        "turns (`games/data/reference-sft/`, MIT): turn-level, only the question trained, the "
        "paper's questioner prompt.",
        "",
        "## Training",
        f"- {p['trained']}; {scale['sft_epochs']:g} epoch, learning rate {scale['sft_lr']:g}, "
        f"global batch {scale['sft_global_batch']}, LoRA r 16 / α 32 on every linear layer.",
        f"- Command: `{p['command']}` (commit `{p['bench_commit'][:12]}`).",
        f"- {sft.get('examples', '?')} examples, {sft.get('global_step', '?')} optimizer steps.",
        f"- Precision: {sft.get('precision', 'float32')} (bfloat16: the frozen base in bf16, the "
        "LoRA weights and their optimiser state in float32, under autocast; games.precision).",
        "",
        "## Held-out results",
        f"Played on the first {cli['n_words']} words of `{settings['word_list']}` (secrets the SFT "
        f"data never holds), {scale['eval_samples']} games each, against the "
        f"`{settings['judge']}` judge, {settings['max_turns']} questions, the "
        f"`{settings['win_rule']}` win rule, sampled as the paper validates (T 0.7, top-p 0.8, "
        "top-k 20). Success is mean@k over words with its 95% interval over words.",
        "",
        f"- success: {pct(cli['success_rate'], cli['success_ci95'])}; strict rule: "
        f"{pct(cli['strict_success_rate'], cli['strict_success_ci95'])}",
        f"- valid questions: {100 * cli['valid_questions']:.1f}%; mean turns {cli['mean_turns']}",
    ]
    if check:
        lines.append(
            f"- against the `{check['judge']}` judge on its first {check['success']['words']} "
            f"playable words: {pct(check['success']['rate'], check['success']['ci95'])}"
        )
    latency = settings.get("latency")
    if latency:
        lines.append(
            f"- a question {latency['p50_s']} s (median) / {latency['p95_s']} s (p95) after "
            f"an answer, one game at a time on {latency['threads']} CPU threads "
            f"({latency['questions']} questions)"
        )
    lines += [
        "",
        "## Limits",
        "A 135M model trained on a small sample of the paper's turns on a CPU: it asks well-formed "
        "questions but rarely narrows the secret down to a name. The paper's numbers (Qwen3-1.7B: "
        "9.97% after SFT) are for models thirteen times larger trained on every turn.",
        "",
    ]
    return "\n".join(lines)


def ship(
    work: Path, arm: str = "sft", seed: int = 0, name: str = "smol-20q-sft", models: Path = MODELS
) -> dict:
    if arm != "sft":
        raise SystemExit("only the SFT arm ships (see the module's docstring)")
    scale = json.loads((work / "scale.json").read_text(encoding="utf-8"))
    smol = SmolScale(**scale)
    adapter, sft = stored(work, "sft")
    test = stored(work, f"eval-{arm}-s{seed}-test-{smol.judge}")
    check_stage = work / f"stage-eval-{arm}-s{seed}-test-{smol.check_judge}.json"
    check = (
        stored(work, f"eval-{arm}-s{seed}-test-{smol.check_judge}")
        if (smol.check_words and check_stage.is_file())
        else None
    )
    latency_stage = work / "stage-latency-sft.json"
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    out = models / name
    out.mkdir(parents=True, exist_ok=True)
    save_adapter_fp16(Path(adapter), out, smol.base)
    command = (
        "python -m bench.learning --base smollm2-135m-instruct --until sft "
        + " ".join(f"--set {k}={v}" for k, v in scale.items() if SmolScale().to_dict()[k] != v)
    ).strip()
    settings = {
        "base": smol.base,
        "guesser_prompt": "paper",
        "sampling": {
            "temperature": test["sampling"]["temperature"],
            "top_p": test["sampling"]["top_p"],
            "top_k": test["sampling"]["top_k"],
            "max_new_tokens": 48,
        },
        "judge": smol.judge,
        "word_list": "dbrl/paper_test",
        "max_turns": smol.max_turns,
        "win_rule": smol.win_rule,
        "provenance": {
            "arm": arm,
            "seed": seed,
            "trained": f"SFT on {sft.get('examples', '?')} of the paper's 48,335 SFT turns",
            "bench_commit": commit,
            "command": command,
        },
        "results": {"cli": results_of(test)},
    }
    if latency_stage.is_file():
        settings["latency"] = stored(work, "latency-sft")
    (out / "guesser.json").write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    (out / "MODEL_CARD.md").write_text(model_card(name, settings, scale, sft, check))
    games = work / "games" / f"eval-{arm}-s{seed}-test-{smol.judge}.jsonl.gz"
    evaluation = models / "evaluation"
    shutil.copy2(games, evaluation / f"{name}.jsonl.gz")
    index_snapshot(
        evaluation,
        name,
        {
            "file": f"{name}.jsonl.gz",
            "command": command,
            "commit": commit,
            "played_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "samples": smol.eval_samples,
            "max_turns": smol.max_turns,
            "win_rule": smol.win_rule,
            "seed": seed,
            "judge_spec": smol.judge,
            "word_list": "dbrl/paper_test",
            "split": "",
            "summary": {
                k: v for k, v in test.items() if not k.endswith("per_word") and k != "belief"
            },
        },
    )
    return settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.learning.ship_smol", description=__doc__)
    parser.add_argument("--work", type=Path, default=Path("var/bench-smol"))
    parser.add_argument("--arm", default="sft")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="smol-20q-sft")
    args = parser.parse_args(argv)
    print(json.dumps(ship(args.work, args.arm, args.seed, args.name), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
