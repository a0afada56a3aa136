"""`python -m bench.guesser_latency --guesser NAME=ADAPTER [...] [--precisions bfloat16,float32]`:
how long a person waits for a model's next question, printed as one JSON object.

Each guesser (a LoRA adapter folder on the pretrained base `--base`, e.g. a shipped
games/data/models/<name>/ or a training job's checkpoint) plays `--games` games one at a time
against `--judge`, as a game on /play/ runs them (batch 1, `one_row`, the prefix cache warm from
the game's earlier turns), sampled as the paper samples; every question is timed from the answer
before it. The precisions are interleaved game by game (the same word and seed for each), so the
comparison holds on a shared machine. p50 / p95 / max seconds per precision and guesser, with the
load average before and after; `--save FILE` also writes the JSON there.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import report


def quantiles(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "p50_s": round(statistics.median(ordered), 3),
        "p95_s": round(ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)], 3),
        "max_s": round(ordered[-1], 3),
    }


def timed_guesser(guesser, timed: list[float]):
    """`guesser` with every ask_batch call's seconds appended to `timed`."""
    ask_batch = guesser.ask_batch

    def timed_ask(states):
        began = time.perf_counter()
        asks = ask_batch(states)
        timed.append(time.perf_counter() - began)
        return asks

    guesser.ask_batch = timed_ask
    return guesser


def measure(
    guessers: dict[str, str],
    *,
    base: str,
    judge: str,
    words: list[str],
    precisions: tuple[str, ...],
    max_turns: int = 20,
    win_rule: str = "reference",
) -> dict[str, Any]:
    from games.llm.base import PAPER_VAL_SAMPLING
    from games.registry import build_guesser, build_judge
    from games.rollout import rollout
    from games.types import GameConfig

    the_judge = build_judge(judge)
    config = GameConfig(max_turns=max_turns, win_rule=win_rule)
    out: dict[str, Any] = {}
    for name, adapter in guessers.items():
        players, timed, turns = {}, {}, {}
        for precision in precisions:
            timed[precision], turns[precision] = [], 0
            guesser = build_guesser(
                f"hf:{base}", adapter=adapter or None, precision=precision, one_row=True
            )
            guesser.sampling = replace(guesser.sampling, **PAPER_VAL_SAMPLING)
            players[precision] = timed_guesser(guesser, timed[precision])
        for i, word in enumerate(words):
            for precision in precisions:
                games = rollout(players[precision], the_judge, [word], seeds=[i], config=config)
                turns[precision] += sum(len(g.turns) for g in games)
        out[name] = {
            precision: {
                "precision": precision,
                "questions": len(timed[precision]),
                "turns": turns[precision],
                "games": len(words),
                **quantiles(timed[precision]),
            }
            for precision in precisions
        }
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.guesser_latency", description=__doc__)
    parser.add_argument(
        "--guesser",
        action="append",
        required=True,
        metavar="NAME=ADAPTER",
        help="a guesser to time: its name and its LoRA adapter folder (empty: the bare base)",
    )
    parser.add_argument("--base", default="smollm2-135m-instruct")
    parser.add_argument("--judge", default="pretrained")
    parser.add_argument("--word-list", default="dbrl/paper_val")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--precisions", default="bfloat16,float32")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = every core)")
    parser.add_argument("--save", type=Path)
    args = parser.parse_args(argv)
    pairs = [g.split("=", 1) for g in args.guesser]
    if any(len(p) != 2 or not p[0] for p in pairs):
        parser.error("--guesser takes NAME=ADAPTER")
    import torch

    from games.wordlists import read_words

    torch.set_num_threads(args.threads or len(os.sched_getaffinity(0)))
    load_start = list(os.getloadavg())
    began = time.perf_counter()
    measured = measure(
        dict(pairs),
        base=args.base,
        judge=args.judge,
        words=read_words(args.word_list)[: args.games],
        precisions=tuple(p.strip() for p in args.precisions.split(",") if p.strip()),
    )
    threads = torch.get_num_threads()
    result = {
        "command": " ".join(
            ["python -m bench.guesser_latency", *(sys.argv[1:] if argv is None else argv)]
        ),
        "base": args.base,
        "judge": args.judge,
        "word_list": args.word_list,
        "threads": threads,
        "load_average_start": load_start,
        # per guesser: the first precision's figures (the one a card reports) and every one
        "guessers": {
            name: {**next(iter(variants.values())), "threads": threads, "variants": variants}
            for name, variants in measured.items()
        },
        "load_average_end": list(os.getloadavg()),
        "seconds": round(time.perf_counter() - began, 1),
    }
    report(result, args.save)
    return result


if __name__ == "__main__":
    main()
