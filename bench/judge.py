"""Judges against the paper's LLM judge: `python -m bench.judge [--train] [--games]` prints one JSON
object (and writes bench/results/judge.json).

- judges: `python -m games judge-eval` figures of the KB judge before (closed world: every absent
  fact a No) and after (open world: only absent hypernyms are a No), the learned judge and the
  hybrid, on the same questions: every reference row of the shipped learned judge's test secrets
  (split by a hash of the secret; never trained on, nor used to choose settings);
- speed: answers per second in batches of 4,096 on those rows, every judge with empty caches,
  and the learned judge's latency for one answer to a question it has not seen, about a secret
  it has seen and about one it has not (median and p95);
- --games: the information-gain guesser's success on dbrl/paper_test (20 questions, one game per
  word) against each judge;
- --train: retrain the learned judge with the shipped weights' config and report the wall time
  and its held-out figures (seeded, so within a few thousandths of the shipped ones: torch's CPU
  kernels are not bit-for-bit deterministic across runs).
The ceiling: the reference judge agrees with itself 91.8% of the time on questions asked twice.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import RESULTS_DIR, report
from games.judge_eval import REFERENCE_TRIPLES, evaluate, read_triples
from games.judges.learned import DEFAULT_WEIGHTS, LearnedJudge, load_model
from games.registry import build_guesser, build_judge
from games.rollout import rollout
from games.types import GameConfig
from games.wordlists import read_words
from training.judge.data import split_of

RESULTS = RESULTS_DIR / "judge.json"
JUDGES = {
    "kb_closed": "kb:closed",
    "kb_open": "kb",
    "learned": "learned",
    "kb+learned": "kb+learned",
}


def held_out_rows(split: str = "test") -> tuple[list[dict], dict]:
    config = load_model().meta["config"]
    rows = [
        r
        for r in read_triples(REFERENCE_TRIPLES)
        if split_of(r["secret"], config["val_percent"], config["test_percent"]) == split
    ]
    return rows, config


def fresh(judge):
    """The judge with the learned model's caches emptied (models are shared within a process)."""
    for part in (judge, getattr(judge, "learned", None)):
        if isinstance(part, LearnedJudge):
            part.model.clear_caches()
    return judge


def latency_ms(rows: list[dict], n: int = 300) -> dict:
    """One answer at a time, each to a question the judge's caches have not seen: about a secret it
    has answered before, and about a new one."""
    judge = fresh(LearnedJudge(DEFAULT_WEIGHTS))
    seen_questions, seen_secrets = set(), set()
    times: dict[str, list[float]] = {"known_secret": [], "new_secret": []}
    for r in rows:
        if r["question"] in seen_questions:
            continue
        seen_questions.add(r["question"])
        kind = "known_secret" if r["secret"] in seen_secrets else "new_secret"
        seen_secrets.add(r["secret"])
        start = time.perf_counter()
        judge.judge(r["secret"], r["question"])
        times[kind].append((time.perf_counter() - start) * 1000)
        if min(len(t) for t in times.values()) >= n:
            break
    return {
        kind: {
            "n": len(t),
            "median": round(statistics.median(t), 3),
            "p95": round(sorted(t)[int(0.95 * len(t))], 3),
        }
        for kind, t in times.items()
    }


def paper_test_games(spec: str) -> dict:
    judge = fresh(build_judge(spec))
    words = []
    for w in read_words("dbrl/paper_test"):
        try:
            judge.check_secret(w)
            words.append(w)
        except ValueError:
            pass
    guesser = build_guesser("infogain")
    started = time.perf_counter()
    games = []
    for i in range(0, len(words), 64):
        chunk = words[i : i + 64]
        games += rollout(
            guesser, judge, chunk, seeds=list(range(i, i + len(chunk))), config=GameConfig()
        )
    won = [g for g in games if g.won]
    return {
        "games": len(games),
        "success": round(len(won) / len(games), 4),
        "mean_turns": round(sum(g.n_turns for g in games) / len(games), 2),
        "unknown_answers": round(
            sum(t.verdict.value == "unknown" for g in games for t in g.turns)
            / sum(g.n_turns for g in games),
            4,
        ),
        "seconds": round(time.perf_counter() - started, 1),
    }


def retrain(config: dict) -> dict:
    from training.judge.config import LearnedJudgeJobConfig
    from training.judge.trainer import run
    from training.reporting import ConsoleReporter

    with tempfile.TemporaryDirectory() as out, open(Path(out) / "log", "w") as log:
        started = time.perf_counter()
        result = run(LearnedJudgeJobConfig(**config), ConsoleReporter(out, stream=log))
        return {
            "seconds": round(time.perf_counter() - started, 1),
            "val": result["val"],
            "test": result["test"],
            "bytes": result["bytes"],
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.judge", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--train", action="store_true", help="retrain the learned judge and time it"
    )
    parser.add_argument(
        "--games", action="store_true", help="play infogain on dbrl/paper_test against each judge"
    )
    args = parser.parse_args(argv)
    rows, config = held_out_rows()
    meta = load_model().meta
    out = {
        "rows": {
            "split": "test",
            "questions": sum(r["answer"] in ("yes", "no") for r in rows),
            "secrets": len({r["secret"] for r in rows}),
            "source": "games/data/reference-judge/triples.parquet",
        },
        "weights": {
            "path": str(DEFAULT_WEIGHTS.relative_to(Path.cwd()))
            if DEFAULT_WEIGHTS.is_relative_to(Path.cwd())
            else str(DEFAULT_WEIGHTS),
            "bytes": DEFAULT_WEIGHTS.stat().st_size,
            "config": config,
            "trained_on": meta.get("rows"),
            "validation": meta.get("held_out", {}).get("val"),
        },
        "reference_self_agreement": 0.918,
        "judges": {},
    }
    for name, spec in JUDGES.items():
        out["judges"][name] = {
            k: v for k, v in evaluate(fresh(build_judge(spec)), rows).items() if k != "judge"
        }
        print(f"{name}: {out['judges'][name]}", file=sys.stderr)
    out["learned_latency_ms"] = latency_ms(rows)
    if args.games:
        out["infogain_paper_test"] = {name: paper_test_games(spec) for name, spec in JUDGES.items()}
    if args.train:
        out["training"] = retrain(config)
    report(out, RESULTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
