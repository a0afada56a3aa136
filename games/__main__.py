"""`python -m games play ...` (terminal play), `python -m games eval ... --json` (a guesser against
a judge) and `python -m games judge-eval --judge SPEC --triples FILE --json` (a judge against
reference answers)."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import replace

from games import precision
from games.engine import TwentyQuestions, reward_parts
from games.judge_eval import REFERENCE_TRIPLES
from games.judges.base import UnknownSecretError, playable_words
from games.llm.base import PAPER_VAL_SAMPLING
from games.metrics import summarise
from games.precision import PRECISIONS, PrecisionError, normalise
from games.registry import (
    SpecError,
    build_guesser,
    build_judge,
    one_row_options,
    precision_options,
    precision_record,
)
from games.rollout import rollout
from games.rules import VERDICT_FEEDBACK
from games.types import WIN_RULES, GameConfig, Turn, Verdict
from games.wordlists import read_words

HUMAN_ANSWERS = {
    "y": Verdict.YES,
    "yes": Verdict.YES,
    "n": Verdict.NO,
    "no": Verdict.NO,
    "?": Verdict.UNKNOWN,
    "i": Verdict.INVALID,
}


def add_game_rules(command: argparse.ArgumentParser, win_rule_note: str = "") -> None:
    """--max-turns and --win-rule, as the commands that play games take them."""
    command.add_argument("--max-turns", type=int, default=20)
    command.add_argument(
        "--win-rule",
        choices=WIN_RULES,
        default="reference",
        help=f"which questions win (games.rules){win_rule_note}",
    )


def precision_arg(value: str) -> str:
    try:
        return normalise(value)
    except PrecisionError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m games", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="play guesser vs judge over a word list and report metrics")
    ev.add_argument(
        "--guesser",
        required=True,
        help="infogain | random | hf:PATH | openai:URL#MODEL | vllm:PATH",
    )
    ev.add_argument(
        "--judge",
        default="kb",
        help="kb | kb:any | hf:PATH | openai:URL#MODEL | vllm:PATH | ensemble:A,B",
    )
    ev.add_argument(
        "--words", required=True, help="a file or a shipped list such as dbrl/paper_test"
    )
    ev.add_argument(
        "--pool",
        help=(
            "candidate words: the infogain/random guessers' pool (default: the KB's nouns); for a "
            "model guesser the words it knows (words outside it are counted in outside_pool)"
        ),
    )
    ev.add_argument("--samples", type=int, default=1, help="k games per word")
    ev.add_argument(
        "--sampling",
        choices=("model", "paper"),
        default="model",
        help=(
            "a model guesser's decoding: model (what its folder records, else T=1) or paper "
            "(the reference's validation: T 0.7, top-p 0.8, top-k 20); the JSON says which"
        ),
    )
    add_game_rules(ev, "; success under both rules is reported either way")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--batch", type=int, default=64, help="games played in lock-step")
    ev.add_argument("--limit", type=int, help="only the first N words")
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.add_argument(
        "--precision",
        type=precision_arg,
        help=(
            f"{' | '.join(PRECISIONS)} for the guesser's and judge's models where they run one "
            "here (hf, vllm, pretrained); default: the spec's own, else auto. auto = "
            "bfloat16 on a CPU with AMX/AVX512-BF16 or a bf16 GPU, float32 elsewhere"
        ),
    )
    ev.add_argument(
        "--save-games",
        metavar="FILE",
        help="write every game as one JSON line (gzip when FILE ends in .gz), token ids left out",
    )
    je = sub.add_parser(
        "judge-eval", help="measure a judge against reference answers (triples.parquet columns)"
    )
    je.add_argument(
        "--judge",
        default="kb",
        help="kb | kb:closed | learned | learned:PATH | kb+learned | hf:PATH | ...",
    )
    je.add_argument(
        "--triples",
        default=str(REFERENCE_TRIPLES),
        help=(
            "Parquet or JSONL with secret, question, answer "
            "(default: the shipped reference answers)"
        ),
    )
    je.add_argument("--limit", type=int, help="only the first N rows")
    je.add_argument(
        "--precision",
        help="auto | float32 | bfloat16, for a judge that runs a model here (pretrained, hf, "
        "vllm; default: the spec's ?precision= or auto): " + precision.HELP,
    )
    je.add_argument("--json", action="store_true", help="print one JSON object")
    play = sub.add_parser("play", help="play in the terminal")
    play.add_argument(
        "--role",
        choices=["guesser", "answerer"],
        default="guesser",
        help="guesser: you ask, a judge answers; answerer: a model asks, you answer",
    )
    play.add_argument("--judge", default="kb")
    play.add_argument("--guesser", default="infogain")
    play.add_argument("--secret", help="the secret (guesser role; default: drawn from --words)")
    play.add_argument("--words", default="dbrl/paper_test")
    add_game_rules(play)
    play.add_argument("--seed", type=int, default=None)
    return parser


def run_eval(args) -> dict:
    words = read_words(args.words)[: args.limit]
    pool = read_words(args.pool) if args.pool else None
    judge = build_judge(args.judge, **precision_options(args.judge, args.precision))
    playable, skipped = playable_words(judge, words)
    pool_guesser = args.guesser in ("infogain", "random")
    outside_pool = None  # a model guesser's secrets outside the words it knows
    if pool is not None and pool_guesser:  # the secret must be among the candidates
        pool = list(dict.fromkeys([*pool, *playable]))
    elif pool is not None:
        known = set(pool)
        outside_pool = sum(w not in known for w in playable)
    if pool_guesser:
        guesser = build_guesser(args.guesser, pool=pool)
    else:
        guesser = build_guesser(args.guesser, **precision_options(args.guesser, args.precision))
        if args.sampling == "paper":  # the token budget stays the guesser's
            guesser.sampling = replace(guesser.sampling, **PAPER_VAL_SAMPLING)
    config = GameConfig(max_turns=args.max_turns, win_rule=args.win_rule)
    jobs = [(w, s) for s in range(args.samples) for w in playable]
    position: dict[str, int] = {}  # a word's first place in the list seeds its games
    for i, w in enumerate(words):
        position.setdefault(w, i)
    trajectories = []
    start = time.perf_counter()
    for i in range(0, len(jobs), args.batch):
        chunk = jobs[i : i + args.batch]
        seeds = [args.seed * 1_000_003 + s * 100_003 + position[w] for w, s in chunk]
        trajectories += rollout(guesser, judge, [w for w, _ in chunk], seeds=seeds, config=config)
    elapsed = time.perf_counter() - start
    summary = summarise(trajectories, k=args.samples)
    if args.save_games:
        save_games(trajectories, args.save_games)
    sampling = getattr(guesser, "sampling", None)
    return {
        **summary.to_dict(),
        "guesser": args.guesser,
        "judge": args.judge,
        "words": args.words,
        "pool": args.pool,
        "outside_pool": outside_pool,
        "sampling": sampling.__dict__ if sampling is not None else None,
        "max_turns": args.max_turns,
        "seed": args.seed,
        "precision": precision_record(args.precision, guesser=guesser, judge=judge),
        "skipped_words": len(skipped),
        "skipped_examples": skipped[:10],
        "seconds": round(elapsed, 2),
    }


TOKEN_FIELDS = ("messages", "prompt_token_ids", "token_ids", "logprobs")


def save_games(trajectories, path: str) -> None:
    """One JSON line per game (games.types.Trajectory.to_dict), without the per-token extras."""
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as out:
        for traj in trajectories:
            game = traj.to_dict()
            for turn in game["turns"]:
                turn["extra"] = {
                    k: v for k, v in (turn.get("extra") or {}).items() if k not in TOKEN_FIELDS
                }
            out.write(json.dumps(game) + "\n")


def run_judge_eval(args) -> dict:
    from games.judge_eval import evaluate, read_triples

    rows = read_triples(args.triples)[: args.limit]
    options = {"precision": args.precision} if args.precision else {}
    judge = build_judge(args.judge, **options)
    return {
        **evaluate(judge, rows),
        "spec": args.judge,
        "triples": args.triples,
        "precision": getattr(judge, "precision", None),  # what its model read at, if it has one
    }


def run_play(args, stdin=sys.stdin, out=sys.stdout) -> int:
    rng = random.Random(args.seed)
    config = GameConfig(max_turns=args.max_turns, win_rule=args.win_rule)
    if args.role == "guesser":
        judge = build_judge(args.judge, **one_row_options(args.judge))
        env = TwentyQuestions(judge, config)
        secret = args.secret or rng.choice(read_words(args.words))
        env.reset(secret, seed=args.seed or 0)
        print(
            f"I am thinking of a word. Ask up to {config.max_turns} yes/no questions "
            f"(judge: {judge.name}).",
            file=out,
        )
        while not env.done:
            print(
                f"[{len(env.trajectory.turns) + 1}/{config.max_turns}] > ",
                end="",
                file=out,
                flush=True,
            )
            line = stdin.readline()
            if not line:
                break
            result = env.step(line.strip())
            print(f"  {result.turn.verdict.value}: {result.turn.feedback}", file=out)
        print(f"The word was: {env.trajectory.secret} ({env.trajectory.outcome.value})", file=out)
        return 0
    guesser = build_guesser(args.guesser, **one_row_options(args.guesser))  # one row: a person
    state = guesser.start(seed=args.seed or 0)
    print(
        "Think of a word. Answer y (yes), n (no), ? (don't know) or i (invalid); "
        "say 'won' when it names your word.",
        file=out,
    )
    for index in range(config.max_turns):
        ask = guesser.ask(state)
        print(f"[{index + 1}/{config.max_turns}] {ask.question}", file=out)
        while True:
            print("  your answer > ", end="", file=out, flush=True)
            reply = stdin.readline().strip().lower()
            if reply in HUMAN_ANSWERS or reply in ("won", ""):
                break
        if reply in ("won", ""):
            print("Solved!", file=out)
            return 0
        verdict = HUMAN_ANSWERS[reply]
        guesser.observe(
            state,
            Turn(
                index=index,
                question=ask.question,
                verdict=verdict,
                feedback=VERDICT_FEEDBACK[verdict],
                reward=reward_parts(verdict, config),
            ),
        )
    print("Out of questions: you win.", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    try:
        if args.command in ("eval", "judge-eval"):
            result = run_eval(args) if args.command == "eval" else run_judge_eval(args)
            if args.json:
                print(json.dumps(result))
            else:
                for key, value in result.items():
                    print(f"{key:>20}: {value}")
            return 0
        return run_play(args)
    except (SpecError, FileNotFoundError, UnknownSecretError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
