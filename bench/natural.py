"""The natural guesser (issue 33): `python -m bench.natural [--samples 4] [--only NAME]` prints one
JSON object and writes bench/results/natural.json (with --only, the named parts replace theirs in
the file and the rest is kept).

- evaluations: `python -m games eval --guesser natural --win-rule strict --json ...` (the CLI's own
  code, `games.__main__.run_eval`, so each row's `command` reproduces it) on dbrl/paper_test and
  on everyday/everyday100, answered by judges the guesser's answer model (the learned judge) is
  not: the pretrained judge (a cross-encoder; the shipped folder combines its logit with the
  learned judge's at weight 0.22 against 0.64), the same cross-encoder alone (its folder without
  the combination, written to var/natural/cross-encoder-alone) and the knowledge-base judge;
- reference: games on the learned judge's test secrets of the reference answers (secrets it was
  never trained on) that are in the guesser's pool, answered by the reference answers where they
  cover the (secret, question) pair, by the pretrained judge elsewhere; the share covered is
  reported;
- paired: the guesser against its previous version (`--previous`, a natural:SETTINGS spec) on
  the same words and judge, games played under the strict rule, the per-word difference in wins
  with a 95% interval (`--paired`, written to bench/results/natural-paired.json); against the
  knowledge-base guesser it replaced as the default opponent with `--previous infogain --out
  bench/results/natural-vs-infogain.json`;
- tuning, on validation words only (everyday_val and dbrl/paper_val, pooled; written to
  bench/results/natural-tuning.json): `--tune-final`, the number of final guesses, each against 2
  on the same words; `--tune`, the other settings, each against the default;
- own-matrix: validation words in the pool answered by the guesser's own matrix (yes where
  P(yes) >= 0.5), an answerer that never contradicts it: the ceiling search alone sets;
- latency: the guesser's time from an answer to its next question (observe + ask), per turn, over
  games on dbrl/paper_val answered by the pretrained judge, p50 / p95 / max in ms, against the
  300 ms target.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from bench import RESULTS_DIR, report
from games import rules
from games.__main__ import make_parser, run_eval
from games.judges.base import Judge, JudgeRequest
from games.types import GameConfig, JudgeAnswer, Verdict

CROSS_ENCODER_ALONE = "var/natural/cross-encoder-alone"  # the shipped judge without the learned
EVALUATIONS = {
    "paper_test/pretrained": ("dbrl/paper_test", "pretrained"),
    "everyday100/pretrained": ("everyday/everyday100", "pretrained"),
    "paper_test/cross-encoder-alone": ("dbrl/paper_test", f"pretrained:{CROSS_ENCODER_ALONE}"),
    "everyday100/cross-encoder-alone": (
        "everyday/everyday100",
        f"pretrained:{CROSS_ENCODER_ALONE}",
    ),
    "paper_test/kb": ("dbrl/paper_test", "kb"),
    "everyday100/kb": ("everyday/everyday100", "kb"),
}
LATENCY_WORDS = "dbrl/paper_val"
STRICT = GameConfig(max_turns=20, win_rule="strict")  # every game of this benchmark
TARGET_MS = 300


def cross_encoder_alone() -> None:
    """The shipped pretrained judge's folder without its combination with the learned judge (the
    guesser's answer model): the cross-encoder alone, calibrated as shipped, in var/."""
    import json
    from pathlib import Path

    from games.judges.cross_encoder import DEFAULT_DIR, read_meta

    folder = Path(CROSS_ENCODER_ALONE)
    folder.mkdir(parents=True, exist_ok=True)
    meta = read_meta()
    meta.pop("combine", None)
    meta["held_out"] = meta.get("cross_encoder_alone", {})
    (folder / "judge.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    adapter = folder / "adapter"
    if not adapter.exists():
        adapter.symlink_to((DEFAULT_DIR / "adapter").resolve())


def evaluation(words: str, judge: str, samples: int, guesser: str) -> dict:
    argv = [
        "eval",
        "--guesser",
        guesser,
        "--judge",
        judge,
        "--words",
        words,
        "--win-rule",
        "strict",
        "--samples",
        str(samples),
        "--json",
    ]
    result = run_eval(make_parser().parse_args(argv))
    result["command"] = "python -m games " + shlex.join(argv)
    return result


class ReferenceJudge(Judge):
    """The reference answers where they cover the pair (majority; a tie falls through), the
    fallback judge elsewhere; counts how many answers each gave."""

    def __init__(self, answers: dict[tuple[str, str], str], fallback: Judge):
        self.answers, self.fallback = answers, fallback
        self.name = f"reference+{fallback.name}"
        self.covered = self.other = 0

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        out: list[JudgeAnswer | None] = [None] * len(requests)
        todo = []
        for i, r in enumerate(requests):
            answer = self.answers.get((r.secret, r.question))
            if answer in ("yes", "no"):
                out[i] = JudgeAnswer(Verdict(answer), raw="reference")
                self.covered += 1
            else:
                todo.append(i)
        self.other += len(todo)
        for i, answer in zip(todo, self.fallback.judge_batch([requests[i] for i in todo])):
            out[i] = answer
        return out  # type: ignore[return-value]


def reference_games(guesser_spec: str) -> dict:
    import pyarrow.parquet as pq

    from games.metrics import summarise
    from games.registry import build_guesser, build_judge
    from games.rollout import rollout
    from training.judge.data import split_of

    frame = pq.read_table(
        "games/data/reference-judge/triples.parquet", columns=["secret", "question", "answer"]
    ).to_pydict()
    guesser = build_guesser(guesser_spec)
    secrets = sorted(
        s
        for s in set(frame["secret"])
        if split_of(s, 10, 10) == "test" and guesser.data.word_id(s) is not None
    )
    answers = dict(zip(zip(frame["secret"], frame["question"]), frame["answer"]))
    judge = ReferenceJudge(answers, build_judge("pretrained"))
    start = time.perf_counter()
    trajectories = rollout(guesser, judge, secrets, seeds=range(len(secrets)), config=STRICT)
    summary = summarise(trajectories, k=1).to_dict()
    return {
        **summary,
        "words": "the learned judge's test secrets of the reference answers in the pool",
        "judge": judge.name,
        "answers_from_reference": judge.covered,
        "answers_from_fallback": judge.other,
        "seconds": round(time.perf_counter() - start, 1),
    }


class OwnMatrixJudge(Judge):
    """Answers as the natural guesser expects: yes where its matrix's P(yes) >= 0.5, no
    elsewhere (and for a word or question outside it)."""

    name = "own-matrix"

    def __init__(self, data):
        self.data = data

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        out = []
        for r in requests:
            i = self.data.word_id(r.secret)
            q = self.data.question_index.get(rules.normalise_question(r.question))
            yes = i is not None and q is not None and self.data.p_yes[i, q] >= 0.5
            out.append(JudgeAnswer(Verdict.YES if yes else Verdict.NO, raw="matrix"))
        return out


def own_matrix_games(guesser_spec: str) -> dict:
    """The ceiling search alone sets: validation words in the pool, answered by the guesser's
    own matrix (an answerer that never contradicts it)."""
    from games.registry import build_guesser
    from games.rollout import rollout
    from games.wordlists import read_words

    guesser = build_guesser(guesser_spec)
    judge = OwnMatrixJudge(guesser.data)
    out = {"judge": judge.name, "note": "yes where the guesser's P(yes) >= 0.5, else no"}
    for name in VALIDATION:
        words = [w for w in read_words(name) if guesser.data.word_id(w) is not None]
        games = rollout(guesser, judge, words, seeds=range(len(words)), config=STRICT)
        out[name] = {
            "words_in_pool": len(words),
            "strict_success_rate": round(statistics.fmean(g.won for g in games), 4),
            "mean_turns": round(statistics.fmean(len(g.turns) for g in games), 2),
        }
    return out


def latency(guesser_spec: str, games: int) -> dict:
    from games.engine import TwentyQuestions
    from games.registry import build_guesser, build_judge
    from games.wordlists import read_words

    guesser, judge = build_guesser(guesser_spec), build_judge("pretrained")
    first, later = [], []
    for seed, word in enumerate(read_words(LATENCY_WORDS)[:games]):
        env = TwentyQuestions(judge, STRICT)
        env.reset(word, seed)
        state = guesser.start(seed=seed)
        state.data["win_rule"] = "strict"
        turn = None
        while not env.done:
            start = time.perf_counter()
            if turn is not None:
                guesser.observe(state, turn)
            ask = guesser.ask(state)
            (later if turn is not None else first).append((time.perf_counter() - start) * 1000)
            turn = env.step(ask.question).turn
    later.sort()
    return {
        "games": games,
        "words": LATENCY_WORDS,
        "decisions": len(later),
        "p50_ms": round(statistics.median(later), 2),
        "p95_ms": round(later[int(0.95 * (len(later) - 1))], 2),
        "max_ms": round(later[-1], 2),
        "first_question_p50_ms": round(statistics.median(first), 2),
        "target_ms": TARGET_MS,
        "note": "observe(answer) + ask(), one game at a time, the judge's time excluded",
    }


TUNING = [  # natural:SETTINGS, each tried on the validation words against the default
    "noise=0.03",
    "noise=0.08",
    "noise=0.12",
    "guess_threshold=0.07",
    "guess_threshold=0.1",
    "guess_threshold=0.25",
    "guess_threshold=0.4",
    "prior_exponent=0.25",
    "prior_exponent=1.0",
]


def tune() -> list[dict]:
    """Each setting of TUNING on the validation lists, paired against the default."""
    return validation_rows([f"natural:{settings}" for settings in TUNING], "natural", "default")


def wins_by_word(spec: str, words: Sequence[str], judge) -> list[bool]:
    """One strict-rule game per word (seed = its index), in word order: won or not."""
    from games.registry import build_guesser
    from games.rollout import rollout

    games = rollout(build_guesser(spec), judge, list(words), seeds=range(len(words)), config=STRICT)
    won = {g.secret: g.won for g in games}
    return [won[w] for w in words]


def paired_difference(new: Sequence[bool], old: Sequence[bool]) -> dict:
    """Mean of new - old over the same words, with a normal 95% interval of the paired mean."""
    d = [float(a) - float(b) for a, b in zip(new, old, strict=True)]
    mean = statistics.fmean(d)
    half = 1.96 * statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else 0.0
    return {
        "words": len(d),
        "new": round(statistics.fmean(map(float, new)), 4),
        "old": round(statistics.fmean(map(float, old)), 4),
        "difference": round(mean, 4),
        "difference_ci95": [round(mean - half, 4), round(mean + half, 4)],
        "new_only": sum(1 for x in d if x > 0),
        "old_only": sum(1 for x in d if x < 0),
    }


PAIRED = {  # test words, reported once settings are fixed
    "everyday100/pretrained": ("everyday/everyday100", "pretrained"),
    "paper_test/pretrained": ("dbrl/paper_test", "pretrained"),
}
FINAL_GUESSES = list(range(2, 11))
VALIDATION = ["everyday/everyday_val", "dbrl/paper_val"]


def paired(new_spec: str, old_spec: str) -> dict:
    from games.registry import build_judge
    from games.wordlists import read_words

    out = {"new": new_spec, "old": old_spec, "win_rule": "strict", "k": 1}
    for name, (words, judge_spec) in PAIRED.items():
        judge, secrets = build_judge(judge_spec), read_words(words)
        row = paired_difference(
            wins_by_word(new_spec, secrets, judge), wins_by_word(old_spec, secrets, judge)
        )
        out[name] = {**row, "judge": judge_spec, "word_list": words}
        print(name, out[name], flush=True)
    return out


def tune_final() -> list[dict]:
    """final_guesses on the validation lists, each against 2."""
    specs = [f"natural:final_guesses={f}" for f in FINAL_GUESSES]
    return validation_rows(specs, "natural:final_guesses=2", "final_guesses_2")


def validation_rows(
    specs: Sequence[str], baseline: str, baseline_name: str, judge_spec: str = "pretrained"
) -> list[dict]:
    """Each guesser spec on the validation lists answered by one judge: success per list, and
    the wins pooled over the lists paired against the baseline spec's on the same words."""
    from games.registry import build_judge
    from games.wordlists import read_words

    judge = build_judge(judge_spec)  # one judge: its answers are cached across the specs
    lists = {name: read_words(name) for name in VALIDATION}

    def wins(spec: str) -> dict[str, list[bool]]:
        return {name: wins_by_word(spec, words, judge) for name, words in lists.items()}

    old = wins(baseline)
    rows = []
    for spec in specs:
        start = time.perf_counter()
        new = old if spec == baseline else wins(spec)
        rows.append(
            {
                "guesser": spec,
                "judge": judge_spec,
                "success": {n: round(statistics.fmean(map(float, new[n])), 4) for n in lists},
                f"pooled_vs_{baseline_name}": paired_difference(
                    [w for n in lists for w in new[n]], [w for n in lists for w in old[n]]
                ),
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.natural")
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--guesser", default="natural")
    parser.add_argument(
        "--only",
        action="append",
        help="parts: evaluation names, latency, reference, own-matrix; repeatable",
    )
    parser.add_argument("--latency-games", type=int, default=50)
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument(
        "--out", help="the JSON file (default bench/results/natural.json, natural-paired.json)"
    )
    parser.add_argument("--tune", action="store_true", help="only TUNING on validation")
    parser.add_argument(
        "--tune-final", action="store_true", help="only final_guesses on validation"
    )
    parser.add_argument("--paired", action="store_true", help="only the guesser vs --previous")
    parser.add_argument("--previous", default="natural:final_guesses=2")
    args = parser.parse_args(argv)
    result: dict = {"guesser": args.guesser, "evaluations": {}}
    start = time.perf_counter()
    cross_encoder_alone()
    if args.paired:
        result = {"paired": paired(args.guesser, args.previous)}
        save_as = Path(args.out) if args.out else RESULTS_DIR / "natural-paired.json"
        report(result, None if args.no_save else save_as)
        return 0
    if args.tune_final or args.tune:  # one part of natural-tuning.json, the rest kept
        path = RESULTS_DIR / "natural-tuning.json"
        saved = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        part = {"final_guesses": tune_final()} if args.tune_final else {"tuning": tune()}
        report({**saved, **part}, None if args.no_save else path)
        return 0
    save_as = Path(args.out) if args.out else RESULTS_DIR / "natural.json"
    if args.only and save_as.is_file():  # a part measured again: the rest of the file kept
        saved = json.loads(save_as.read_text(encoding="utf-8"))
        result = {**saved, "guesser": args.guesser, "evaluations": dict(saved["evaluations"])}
    if not args.only or "latency" in args.only:
        result["latency"] = latency(args.guesser, args.latency_games)
    for name, (words, judge) in EVALUATIONS.items():
        if args.only and name not in args.only:
            continue
        result["evaluations"][name] = evaluation(words, judge, args.samples, args.guesser)
        if not args.no_save:  # what is measured so far, in case the run is cut short
            save_as.parent.mkdir(parents=True, exist_ok=True)
            save_as.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if not args.only or "reference" in args.only:
        result["reference"] = reference_games(args.guesser)
    if not args.only or "own-matrix" in args.only:
        result["own_matrix"] = own_matrix_games(args.guesser)
    if not args.only:
        result["seconds"] = round(time.perf_counter() - start, 1)
    report(result, None if args.no_save else save_as)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
