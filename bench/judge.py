"""Judges against the paper's LLM judge: `python -m bench.judge [--train] [--games]` prints one JSON
object (and writes bench/results/judge.json).

- judges: `python -m games judge-eval` figures of the KB judge before (closed world: every absent
  fact a No) and after (open world: only absent hypernyms are a No, outside the taxonomy's gaps),
  the pretrained judge, the learned judge and the hybrid, on the same questions: every reference
  row of the shipped judges' test secrets (split by a hash of the secret; never trained on, nor
  used to choose settings);
- speed: answers per second in batches of 4,096 on those rows, every judge with empty caches
  (every pair is new: no cache helps), the pretrained and learned judges' latency for one answer
  to a question they have not seen, about a secret they have seen and about one they have not
  (median and p95), and the pretrained judge's load time in a fresh process (median of 3);
- --games: the information-gain guesser's success on dbrl/paper_test (20 questions, one game per
  word) against each judge, with the judge's share of the time;
- --evaluation: the same against the pretrained judge with 8 games per word (433 × 8 games, an
  evaluation's size), the seconds its judging took;
- --train: retrain the learned judge with the shipped weights' config and report the wall time
  and its held-out figures (seeded, so within a few thousandths of the shipped ones: torch's CPU
  kernels are not bit-for-bit deterministic across runs).
The ceiling: the reference judge agrees with itself 91.8% of the time on questions asked twice.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import RESULTS_DIR, argument_parser, report
from games.judge_eval import REFERENCE_TRIPLES, evaluate, read_triples
from games.judges.cross_encoder import DEFAULT_DIR as PRETRAINED_DIR
from games.judges.cross_encoder import PretrainedJudge, read_meta
from games.judges.learned import DEFAULT_WEIGHTS, LearnedJudge, LearnedModel, load_model
from games.registry import build_guesser, build_judge
from games.rollout import rollout
from games.types import GameConfig
from games.wordlists import read_words
from training.judge.data import split_of

RESULTS = RESULTS_DIR / "judge.json"
JUDGES = {
    "kb_closed": "kb:closed",
    "kb_open": "kb",
    "pretrained": "pretrained",
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


def validation_pairs(limit: int | None = None, seed: int = 0) -> list[tuple[str, str]]:
    """The distinct (secret, question) pairs of the reference's rows about the validation secrets
    the shipped judges were calibrated on (never trained on), shuffled by `seed`, `limit` of them:
    the hidden-style check of a change that must not change answers (games.judge_eval.
    precision_flips)."""
    rows, _ = held_out_rows("val")
    pairs = sorted({(str(r["secret"]), str(r["question"])) for r in rows})
    random.Random(seed).shuffle(pairs)
    return pairs[:limit]


def fresh(judge):
    """The judge with the learned and pretrained models' caches emptied (models are shared within a
    process)."""
    for part in (judge, getattr(judge, "learned", None)):
        if isinstance(part, LearnedJudge):
            part.model.clear_caches()
        if isinstance(part, LearnedModel):
            part.clear_caches()
        if isinstance(part, PretrainedJudge):
            part.model.clear_cache()
            if part.learned is not None:
                part.learned.clear_caches()
    return judge


def load_seconds(spec: str = "pretrained", runs: int = 3) -> dict:
    """Seconds from a fresh interpreter to the judge's first answer (imports, base model, adapter),
    the files already in the page cache: median and each run."""
    code = (
        "import time; t = time.perf_counter(); from games.registry import build_judge; "
        f"j = build_judge({spec!r}); j.judge('dog', 'Is it an animal?'); "
        "print(time.perf_counter() - t)"
    )
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return {"median": round(statistics.median(times), 2), "runs": [round(t, 2) for t in times]}


def latency_ms(rows: list[dict], spec: str = "learned", n: int = 300) -> dict:
    """One answer at a time, each to a question the judge's caches have not seen: about a secret it
    has answered before, and about a new one."""
    judge = fresh(build_judge(spec))
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


class Timed:
    """A judge that adds up the seconds its judge_batch calls take."""

    def __init__(self, judge):
        self.judge, self.seconds = judge, 0.0
        self.name = judge.name

    def check_secret(self, secret):
        return self.judge.check_secret(secret)

    def judge_batch(self, requests):
        started = time.perf_counter()
        try:
            return self.judge.judge_batch(requests)
        finally:
            self.seconds += time.perf_counter() - started


def paper_test_games(spec: str, samples: int = 1) -> dict:
    judge = Timed(fresh(build_judge(spec)))
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
    plays = [(w, s * len(words) + i) for s in range(samples) for i, w in enumerate(words)]
    for i in range(0, len(plays), 64):
        chunk = plays[i : i + 64]
        games += rollout(
            guesser, judge, [w for w, _ in chunk], seeds=[s for _, s in chunk], config=GameConfig()
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
        "judge_seconds": round(judge.seconds, 1),
        "judged": sum(t.verdict.value in ("yes", "no", "unknown") for g in games for t in g.turns),
        "samples": samples,
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
    parser = argument_parser("bench.judge", __doc__)
    parser.add_argument(
        "--train", action="store_true", help="retrain the learned judge and time it"
    )
    parser.add_argument(
        "--games", action="store_true", help="play infogain on dbrl/paper_test against each judge"
    )
    parser.add_argument(
        "--evaluation",
        action="store_true",
        help="time an evaluation's judging: infogain on dbrl/paper_test x 8 against the pretrained "
        "judge (the 6-minute target)",
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
    out["latency_ms"] = {name: latency_ms(rows, name) for name in ("pretrained", "learned")}
    out["pretrained_load_seconds"] = load_seconds()
    out["pretrained_judge"] = {
        k: v
        for k, v in read_meta().items()
        if k in ("base_model", "input", "combine", "calibration", "rows", "config")
    }
    out["pretrained_judge"]["bytes"] = sum(
        p.stat().st_size for p in PRETRAINED_DIR.rglob("*") if p.is_file()
    )
    if args.games:
        out["infogain_paper_test"] = {name: paper_test_games(spec) for name, spec in JUDGES.items()}
    if args.evaluation:
        out["evaluation_paper_test_x8"] = paper_test_games("pretrained", samples=8)
    if args.train:
        out["training"] = retrain(config)
    report(out, RESULTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
