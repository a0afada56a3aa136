"""`python -m bench.learning.ship [--work var/bench-learning] [--seed 0]`: the learning benchmark's
SFT, StarPO and CIA guessers of one seed as small fp16 folders under games/data/models/ (weights,
tokenizer, the run's config, `guesser.json` with how they play and their provenance, MODEL_CARD.md),
and the world's pool and splits as word files under games/data/models/pool/.

Numbers on the cards are those of the shipped weights (the run's own evaluation stages in --work)
beside the ones recorded in bench/results/learning.json for the same seed."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from bench.learning.card import model_card
from games.llm.chat import MODEL_PLAY_SETTINGS

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "games" / "data" / "models"
RESULTS = ROOT / "bench" / "results" / "learning.json"
ARMS = {
    "sft": "SFT on an imperfect information-gain teacher's games (from the knowledge stage)",
    "starpo": "GRPO with trajectory-level advantages (StarPO), from the SFT model",
    "cia": "GRPO with per-turn advantages and ΔBelief shaping (CIA, λ = 0.1), from the SFT model",
}
SPLITS = ("pool", "sft", "rl", "val", "test")
PLAY = {  # exactly how bench.learning.evaluate plays its guessers
    "guesser_prompt": "short",
    "sampling": {"temperature": 1.0, "max_new_tokens": 24},
    "judge": "kb:closed",
    "max_turns": 20,
    "win_rule": "reference",
    "samples_per_word": 8,
}
KEPT = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json")
KEPT_OPTIONAL = ("chat_template.jinja", "special_tokens_map.json", "training_config.json")


def model_name(arm: str) -> str:
    return f"tiny-20q-{arm}"


def stage(work: Path, name: str):
    path = work / f"stage-{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))[0] if path.is_file() else None


def headline(result: dict | None) -> dict | None:
    """An evaluation's summary without its per-word tables and example."""
    if not result:
        return None
    dropped = ("per_word", "strict_per_word", "bits_per_word", "example")
    return {k: v for k, v in result.items() if k not in dropped}


def run_commit(work: Path) -> str:
    """The commit checked out when the run started (its scale.json was written then)."""
    started = datetime.fromtimestamp((work / "scale.json").stat().st_mtime, UTC)
    out = subprocess.run(
        ["git", "rev-list", "-1", f"--before={started.isoformat()}", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def write_pool(work: Path, out: Path) -> dict[str, str]:
    world = stage(work, "world")
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for split in SPLITS:
        (out / f"{split}.txt").write_text("\n".join(world[split]) + "\n", encoding="utf-8")
        files[split] = str((out / f"{split}.txt").relative_to(ROOT))
    return files


def run_precision(checkpoint: Path) -> str:
    """The precision a checkpoint's run trained at (its training_config.json's resolved one);
    float32 for runs from before the precision was recorded."""
    try:
        run = json.loads((checkpoint / "training_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "float32"
    precision = run.get("resolved", {}).get("precision") or "float32"
    return {"fp32": "float32", "bf16": "bfloat16"}.get(precision, precision)


def save_fp16(checkpoint: Path, out: Path) -> None:
    """The checkpoint's weights (an adapter merged) in float16, with its tokenizer and files."""
    import torch
    from transformers import AutoModelForCausalLM

    from training.common.models import load_model

    if (checkpoint / "adapter_config.json").is_file():
        run = json.loads((checkpoint / "training_config.json").read_text(encoding="utf-8"))
        model, _ = load_model(run["resolved"]["model_path"], adapter=str(checkpoint))
    else:
        model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    model.to(torch.float16).save_pretrained(out, safe_serialization=True)
    for name in (*KEPT, *KEPT_OPTIONAL):
        if name != "config.json" and (checkpoint / name).is_file():
            shutil.copyfile(checkpoint / name, out / name)


def fp16_check(checkpoint: Path, shipped: Path, words: list[str], samples: int = 2) -> dict:
    """Seeded games of the original and the fp16 weights on the same words and seeds: how many
    games came out identical, and success and valid questions of each."""
    from games.judges.kb import KBJudge
    from games.llm.base import SamplingParams
    from games.llm.chat import GuesserFormat
    from games.metrics import summarise
    from games.registry import build_guesser
    from games.rollout import rollout
    from games.types import GameConfig

    config = GameConfig(max_turns=PLAY["max_turns"], win_rule=PLAY["win_rule"])
    secrets = [w for w in words for _ in range(samples)]
    seeds = list(range(len(secrets)))
    played = {}
    for label, folder in (("fp32", checkpoint), ("fp16", shipped)):
        guesser = build_guesser(f"hf:{folder}", sampling=SamplingParams(**PLAY["sampling"]))
        guesser.chat_format = GuesserFormat.named(PLAY["guesser_prompt"])
        played[label] = rollout(guesser, KBJudge(closed=True), secrets, seeds=seeds, config=config)
    same = sum(
        [t.question for t in a.turns] == [t.question for t in b.turns]
        for a, b in zip(played["fp32"], played["fp16"])
    )
    out: dict = {"games": len(secrets), "identical_games": same}
    for label, games in played.items():
        s = summarise(games)
        out[label] = {"success": round(s.success_rate, 4), "invalid_rate": round(s.invalid_rate, 4)}
    return out


SAME_TRAINING = ("games", "teacher_examples", "recovery_examples", "naming_examples", "steps")


def training_matches(training: dict, recorded: dict) -> dict:
    """Whether this run trained on what the recorded run did: its example counts, steps and first
    and last loss (SFT), or its config (GRPO), compared field by field."""
    keys = [k for k in (*SAME_TRAINING, "loss_first_last", "config") if k in recorded]
    return {
        "compared": keys,
        "same": all(training.get(k) == recorded[k] for k in keys),
        "source": "bench/results/learning.json runs.<arm>.<seed>.training",
    }


def ship_arm(
    arm: str, work: Path, seed: int, pool_files: dict, commit: str, check_words: int
) -> dict:
    checkpoint, training = stage(work, f"{arm}-s{seed}")
    checkpoint = Path(checkpoint)
    out = MODELS / model_name(arm)
    save_fp16(checkpoint, out)
    recorded = json.loads(RESULTS.read_text(encoding="utf-8"))
    recorded_run = recorded["runs"][arm].get(str(seed), {})
    world = stage(work, "world")
    scale = json.loads((work / "scale.json").read_text(encoding="utf-8"))
    settings = {
        **PLAY,
        "pool": pool_files["pool"],
        "held_out": pool_files["test"],
        "provenance": {
            "arm": arm,
            "trained": ARMS[arm],
            "seed": seed,
            "world_seed": scale["world_seed"],
            "bench_commit": commit,
            "command": f"python -m bench.learning --until seed-{seed}",
            "scale": scale,
            "checkpoint": str(checkpoint),
            "precision": run_precision(checkpoint),
            "training": {k: v for k, v in training.items() if k != "per_step"},
            "training_matches_recorded": training_matches(
                training, recorded_run.get("training", {})
            ),
            "shipped_at": datetime.now(UTC).isoformat(timespec="seconds"),
        },
        "results": {
            "shipped": {
                split: headline(stage(work, f"eval-{arm}-s{seed}-{split}"))
                for split in ("test", "val", "rl")
            },
            "recorded": {
                "source": f"bench/results/learning.json runs.{arm}.{seed}",
                **{
                    split: headline(recorded_run.get(split))
                    for split in ("test", "val", "rl")
                    if recorded_run
                },
            },
        },
        "fp16_check": fp16_check(checkpoint, out, world["val"][:check_words]),
    }
    (out / MODEL_PLAY_SETTINGS).write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    (out / "MODEL_CARD.md").write_text(model_card(model_name(arm), settings), encoding="utf-8")
    return {
        "name": model_name(arm),
        "bytes": sum(f.stat().st_size for f in out.iterdir()),
        "fp16_check": settings["fp16_check"],
    }


def games_eval(
    guesser: str, settings: dict, games_file: Path, win_rule: str, pool: bool
) -> list[str]:
    """A `python -m games eval` run on the held-out words of a shipped guesser's settings."""
    return [
        "python",
        "-m",
        "games",
        "eval",
        f"--guesser={guesser}",
        f"--judge={settings['judge']}",
        f"--words={settings['held_out']}",
        *([f"--pool={settings['pool']}"] if pool else []),
        f"--samples={settings['samples_per_word']}",
        f"--max-turns={settings['max_turns']}",
        f"--win-rule={win_rule}",
        "--seed=0",
        "--json",
        f"--save-games={games_file.relative_to(ROOT)}",
    ]


def eval_command(name: str, settings: dict, games_file: Path) -> list[str]:
    """The `python -m games eval` run of a shipped guesser on its held-out words, as recorded."""
    guesser = f"hf:games/data/models/{name}"
    return games_eval(guesser, settings, games_file, settings["win_rule"], pool=True)


def head_commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def run_eval(command: list[str], games_file: Path, commit: str) -> tuple[dict, dict]:
    """Run a recorded `python -m games eval` command with this interpreter: its JSON summary, and
    the index entry's provenance of the games it saved to `games_file` (file, digest, command,
    commit, when)."""
    import hashlib
    import sys

    run = subprocess.run(
        [sys.executable, *command[1:]], cwd=ROOT, capture_output=True, text=True, check=True
    )
    summary = json.loads(run.stdout)
    played = {
        "file": games_file.name,
        "digest": hashlib.sha256(games_file.read_bytes()).hexdigest(),
        "command": " ".join(command),
        "commit": commit,
        "played_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return summary, played


def evaluate_shipped(names: list[str]) -> dict:
    """Play every shipped guesser on its held-out words with `python -m games eval` and store the
    games (games/data/models/evaluation/<name>.jsonl.gz) and an index with each run's command,
    commit, digest and summary: the snapshot the web app's seed imports."""
    out = MODELS / "evaluation"
    out.mkdir(exist_ok=True)
    index_file = out / "evaluation.json"
    index = json.loads(index_file.read_text()) if index_file.is_file() else {"guessers": {}}
    commit = head_commit()
    for name in names:
        settings = json.loads((MODELS / name / MODEL_PLAY_SETTINGS).read_text(encoding="utf-8"))
        games_file = out / f"{name}.jsonl.gz"
        summary, played = run_eval(eval_command(name, settings, games_file), games_file, commit)
        index["guessers"][name] = {
            **played,
            "samples": settings["samples_per_word"],
            "max_turns": settings["max_turns"],
            "win_rule": settings["win_rule"],
            "seed": 0,
            "summary": summary,
        }
        index_file.write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
        settings["results"]["cli"] = {
            **{k: index["guessers"][name][k] for k in ("command", "commit", "played_at")},
            **summary,
        }
        (MODELS / name / MODEL_PLAY_SETTINGS).write_text(json.dumps(settings, indent=1) + "\n")
        (MODELS / name / "MODEL_CARD.md").write_text(model_card(name, settings), encoding="utf-8")
        print(json.dumps({name: summary}), flush=True)
    return index


# The baselines people play against, measured as the shipped guessers are (same judge, held-out
# words, samples, turns and win rule; the seed imports them onto the same board). Unlike a tiny
# guesser a baseline gets no --pool: it plays over the knowledge base's nouns, as on /play/.
BASELINES = ("infogain",)
BASELINE_RULE = "lemma"  # the rule the shipped snapshots were played under (called reference then)


def baseline_command(name: str, games_file: Path) -> list[str]:
    """The `python -m games eval` run of a baseline guesser on the shipped guessers' test words."""
    settings = json.loads(
        (MODELS / model_name("sft") / MODEL_PLAY_SETTINGS).read_text(encoding="utf-8")
    )
    return games_eval(name, settings, games_file, BASELINE_RULE, pool=False)


def evaluate_baseline(name: str) -> dict:
    """Play a baseline guesser as the shipped guessers' snapshots were played and store its games
    and index entry beside theirs (`spec_kind`: the seed imports it for the seeded spec of that
    kind only)."""
    out = MODELS / "evaluation"
    index_file = out / "evaluation.json"
    index = json.loads(index_file.read_text(encoding="utf-8"))
    games_file = out / f"{name}.jsonl.gz"
    summary, played = run_eval(baseline_command(name, games_file), games_file, head_commit())
    index["guessers"][name] = {
        **played,
        "samples": summary["k"],
        "max_turns": summary["max_turns"],
        "win_rule": summary["win_rule"],
        "seed": 0,
        "spec_kind": name,
        "summary": summary,
    }
    index_file.write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({name: summary}), flush=True)
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.learning.ship", description=__doc__)
    parser.add_argument("--work", type=Path, default=Path("var/bench-learning"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arms", default="sft+starpo+cia")
    parser.add_argument(
        "--check-words", type=int, default=50, help="validation words of the fp16 check (×2 games)"
    )
    parser.add_argument(
        "--evaluate",
        action="store_true",
        help="play the shipped guessers on their held-out words (the seed's snapshot) and exit",
    )
    parser.add_argument(
        "--baseline",
        choices=BASELINES,
        help="play this baseline guesser as the shipped guessers' snapshots were played and exit",
    )
    args = parser.parse_args(argv)
    if args.baseline:
        evaluate_baseline(args.baseline)
        return 0
    if args.evaluate:
        evaluate_shipped([model_name(arm) for arm in args.arms.split("+")])
        return 0
    import torch

    torch.set_num_threads(2)
    pool_files = write_pool(args.work, MODELS / "pool")
    commit = run_commit(args.work)
    shipped = [
        ship_arm(arm, args.work, args.seed, pool_files, commit, args.check_words)
        for arm in args.arms.split("+")
    ]
    print(json.dumps({"commit": commit, "models": shipped}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
