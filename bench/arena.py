"""`python -m bench.arena [--battles 500] [--solo-words 200] [--stored 10000] [--save]`: two arena
benchmarks, printed as JSON (and written to bench/results/arena.json with --save).

1. A simulated tournament (no Django): four guessers of known strength, information-gain at three
   guess bonuses and the random guesser. Each is first measured alone on its own words (KB nouns of
   dbrl/paper_test: success, and mean questions with a failure counted as 21, which orders them);
   then `--battles` battles, pairs drawn by games.arena.draw_pair (fewest meetings, random sides),
   each on a word of dbrl/paper_val (KB nouns) answered by the knowledge-base judge, outcomes by
   games.arena.battle_outcome and ratings by games.arena.ratings. Passes when the ratings order
   equals the true order and the best's 95% interval lies above the worst's.
2. The Arena page: `--stored` finished battles in a throwaway copy of the configured database
   (DATABASE_URL), one leaderboards refresh, then /leaderboards/ rendered by the test client
   (median of `--renders`; target < 200 ms).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench import RESULTS_DIR, report

RESULTS = RESULTS_DIR / "arena.json"
WORDLISTS = Path(__file__).resolve().parent.parent / "games" / "data" / "wordlists" / "dbrl"
# Guess bonuses far enough apart to differ clearly in strength (a probe on 48 paper_val nouns:
# 0.1 → 90% success, 14.8 questions; 16 → 67%, 16.2; 64 → 63%, 16.7; 256 → 42%, 18.4; 0.0 plays
# worse than 0.1, and 0.3 / 3 are within a fraction of a question of it). 16 came out nearly level
# with 0.1 in battles (fewer questions when both win), so the middle one is 64.
BONUSES = (0.1, 64.0, 256.0)
FAILED_QUESTIONS = 21  # a failure counts as one question more than a game can have


def _kb_nouns(judge, path: Path) -> list[str]:
    from games.judges.base import playable_words
    from games.wordlists import read_words

    return playable_words(judge, read_words(path))[0]


def _guessers(bonuses) -> dict:
    from games.registry import build_guesser

    guessers = {f"infogain-bonus-{b:g}": build_guesser("infogain", guess_bonus=b) for b in bonuses}
    guessers["random"] = build_guesser("random")
    return guessers


def _play(guesser, judge, words: list[str], seeds: list[int]) -> list[tuple[bool, int]]:
    from games.rollout import rollout

    return [(t.won, t.n_turns) for t in rollout(guesser, judge, words, seeds=seeds)]


def solo_strengths(guessers: dict, judge, words: list[str]) -> dict:
    """Each guesser alone on `words`: success and mean questions (a failure counted as 21)."""
    out = {}
    for name, guesser in guessers.items():
        began = time.perf_counter()
        games = _play(guesser, judge, words, list(range(len(words))))
        questions = [n if won else FAILED_QUESTIONS for won, n in games]
        out[name] = {
            "success": round(sum(won for won, _ in games) / len(games), 4),
            "mean_questions": round(statistics.fmean(questions), 3),
            "seconds": round(time.perf_counter() - began, 1),
        }
    return out


def tournament(guessers: dict, judge, words: list[str], n: int, seed: int) -> list[tuple]:
    """`n` battles: pairs by fewest meetings, a random word each; each guesser's games in one
    lock-step rollout. Returns (side A, side B, outcome) triples."""
    from games.arena import battle_outcome, draw_pair

    rng, meetings = random.Random(seed), Counter()
    plan = []
    for k in range(n):
        a, b = draw_pair(list(guessers), meetings, rng)
        meetings[frozenset((a, b))] += 1
        plan.append((a, b, rng.choice(words), 10_000 + k))
    results: dict[tuple[int, str], tuple[bool, int]] = {}
    for name, guesser in guessers.items():
        mine = [(k, side) for k, p in enumerate(plan) for side in (0, 1) if p[side] == name]
        games = _play(guesser, judge, [plan[k][2] for k, _ in mine], [plan[k][3] for k, _ in mine])
        results.update({(k, side): g for (k, side), g in zip(mine, games)})
    return [
        (a, b, battle_outcome(*results[(k, 0)], *results[(k, 1)]))
        for k, (a, b, _, _) in enumerate(plan)
    ]


def run_tournament(args) -> dict:
    from games.arena import ratings
    from games.registry import build_judge

    judge = build_judge("kb")
    battle_words = _kb_nouns(judge, WORDLISTS / "paper_val.txt")
    held = set(battle_words)
    solo_words = [w for w in _kb_nouns(judge, WORDLISTS / "paper_test.txt") if w not in held]
    solo_words = solo_words[: args.solo_words]
    guessers = _guessers(args.bonuses)
    solo = solo_strengths(guessers, judge, solo_words)
    true_order = sorted(solo, key=lambda g: (solo[g]["mean_questions"], -solo[g]["success"]))
    began = time.perf_counter()
    battles = tournament(guessers, judge, battle_words, args.battles, args.seed)
    played = time.perf_counter() - began
    rated = ratings(battles, seed=args.seed)
    by_name = {r.name: r for r in rated}
    best, worst = by_name[true_order[0]], by_name[true_order[-1]]
    return {
        "guess_bonuses": list(args.bonuses),
        "solo_words": len(solo_words),
        "battle_words": len(battle_words),
        "solo": solo,
        "true_order": true_order,
        "battles": len(battles),
        "outcomes": dict(Counter(o for _, _, o in battles)),
        "meetings": {
            " vs ".join(sorted(p)): c for p, c in Counter(frozenset(b[:2]) for b in battles).items()
        },
        "battle_seconds": round(played, 1),
        "ratings": [r.to_dict() for r in rated],
        "arena_order": [r.name for r in rated],
        "order_recovered": [r.name for r in rated] == true_order,
        "best_above_worst": best.lower > worst.upper,
    }


def store_battles(n: int) -> None:
    """`n` finished battles among four guessers (two games each), in batches."""
    from webapp.arena.models import Battle
    from webapp.catalog.models import ModelSpec
    from webapp.play.models import Game, GameMode

    specs = [ModelSpec.objects.create(name=f"bench-{k}", kind="infogain") for k in range(4)]
    rng = random.Random(0)
    for start in range(0, n, 1000):
        count = min(1000, n - start)
        pairs = [rng.sample(specs, 2) for _ in range(count)]
        games = Game.objects.bulk_create(
            [
                Game(
                    mode=GameMode.HUMAN_JUDGE,
                    secret="dog",
                    guesser=s,
                    status="finished",
                    outcome=rng.choice(["won", "lost"]),
                    n_turns=rng.randint(5, 20),
                )
                for pair in pairs
                for s in pair
            ]
        )
        Battle.objects.bulk_create(
            [
                Battle(
                    game_a=games[2 * i],
                    game_b=games[2 * i + 1],
                    guesser_a=a,
                    guesser_b=b,
                    word_source="kept",
                    word="dog",
                    word_in_kb=True,
                    outcome=rng.choice(["a", "b", "tie"]),
                )
                for i, (a, b) in enumerate(pairs)
            ]
        )


def run_render(args) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.test")
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_databases, teardown_databases

    from webapp.leaderboards.services import leaderboards_refresh

    if connection.vendor == "sqlite":  # a file of its own, not the test runs' database
        connection.settings_dict["TEST"]["NAME"] = str(Path(tempfile.mkdtemp()) / "arena.sqlite3")
    old = setup_databases(verbosity=0, interactive=False)
    try:
        store_battles(args.stored)
        began = time.perf_counter()
        leaderboards_refresh()
        refresh = time.perf_counter() - began
        client = Client()
        first = client.get("/leaderboards/")
        assert first.status_code == 200 and b'id="arena-table"' in first.content
        times = []
        for _ in range(args.renders):
            began = time.perf_counter()
            client.get("/leaderboards/")
            times.append((time.perf_counter() - began) * 1000)
        return {
            "database": connection.vendor,
            "stored_battles": args.stored,
            "refresh_seconds": round(refresh, 2),
            "render_ms_median": round(statistics.median(times), 1),
            "render_ms_max": round(max(times), 1),
            "renders": args.renders,
            "under_200_ms": statistics.median(times) < 200,
        }
    finally:
        teardown_databases(old, verbosity=0)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=500)
    parser.add_argument("--solo-words", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bonuses", type=float, nargs=3, default=BONUSES)
    parser.add_argument("--stored", type=int, default=10_000)
    parser.add_argument("--renders", type=int, default=20)
    parser.add_argument("--skip", choices=["tournament", "render"], help="run only the other part")
    parser.add_argument("--save", action="store_true", help="write bench/results/arena.json")
    args = parser.parse_args(argv)
    result = {}
    if args.skip != "tournament":
        result["tournament"] = run_tournament(args)
    if args.skip != "render":
        result["render"] = run_render(args)
    report(result, RESULTS if args.save else None)
    return result


if __name__ == "__main__":
    main()
