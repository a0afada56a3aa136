"""Evaluating a guesser in the knowledge-base world: games against the closed-world KB judge,
success as mean@k over words, and what separates narrowing from naming."""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bench.learning.scale import Scale


def consistency(trajectories, pool: Sequence[str], guesses: frozenset[str]) -> dict[str, Any]:
    """Pool words consistent with every answer at the end of each game (1 for a won game), and for
    the guesses: how many words were left when a game first guessed, and whether each guessed word
    was one of the words the answers so far allowed (naming, apart from narrowing)."""
    import numpy as np

    from games.guessers.infogain import InfoGainGuesser
    from games.rules import normalise_question

    tracker = InfoGainGuesser(pool=list(pool))
    index = {
        normalise_question(tracker.model.questions[q]): i
        for i, q in enumerate(tracker.model.guess_question)
        if q >= 0
    }
    left, at_first_guess, consistent = [], [], []
    for traj in trajectories:
        state = tracker.start(seed=0)
        first = True
        for turn in traj.turns:
            alive = (state.data["contradictions"] == 0) & ~state.data["out"]
            question = normalise_question(turn.question)
            word = index.get(question) if question in guesses else None
            if word is not None:
                consistent.append(bool(alive[word]))
                if first:
                    at_first_guess.append(int(alive.sum()))
                    first = False
            tracker.observe(state, turn)
        left.append(
            1
            if traj.won
            else int(np.count_nonzero((state.data["contradictions"] == 0) & ~state.data["out"]))
        )
    return {"left": left, "at_first_guess": at_first_guess, "consistent": consistent}


def share(hits: int, n: int) -> dict[str, Any]:
    from games.metrics import wilson_interval

    lo, hi = wilson_interval(hits, n)
    return {"rate": round(hits / max(n, 1), 4), "ci95": [round(lo, 4), round(hi, 4)], "n": n}


@functools.lru_cache(maxsize=4)
def guess_questions(pool: tuple[str, ...]) -> frozenset[str]:
    """Normalised guesses that single out one pool word: its guess question, unless that is also a
    category of other pool words ("Is it a being?" with "being" in the pool asks about every
    being; the teacher asks it second), which would count a category question as a guess."""
    import numpy as np

    from games.kb import load_kb
    from games.kb.candidates import candidate_model
    from games.rules import normalise_question

    model = candidate_model(load_kb(), list(pool))
    yes_counts = np.asarray(model.yes.sum(axis=0)).ravel()
    return frozenset(
        normalise_question(model.questions[q])
        for q in model.guess_question
        if q >= 0 and yes_counts[q] == 0
    )


def bits_gained(games: Sequence, pool: Sequence[str]) -> list[float]:
    """Bits each game's answers gained about the secret among the pool (log2 pool for a win)."""
    from games.kb import load_kb
    from games.kb.candidates import candidate_model
    from games.kb.narrowing import game_bits

    model = candidate_model(load_kb(), list(pool))
    return [math.fsum(b for b, _ in game_bits(model, g.turns)) for g in games]


def rate_over_words(games: Sequence, won) -> tuple[dict[str, float], dict[str, Any]]:
    """Per-word rates of `won(game)` and their mean over words with its interval (mean@k)."""
    from games.metrics import mean_at_k_interval

    by_word: dict[str, list[bool]] = {}
    for g in games:
        by_word.setdefault(g.secret, []).append(bool(won(g)))
    rates = {w: statistics.fmean(v) for w, v in by_word.items()}
    lo, hi = mean_at_k_interval(list(rates.values()))
    return rates, {
        "rate": round(statistics.fmean(rates.values()), 4),
        "ci95": [round(lo, 4), round(hi, 4)],
        "words": len(rates),
        "games": len(games),
    }


def strict_win(game) -> bool:
    """Won, and the winning question is a guess of one thing (games.rules' strict rule)."""
    from games.rules import wins

    return game.won and wins(game.turns[-1].question, game.secret, "strict")


def summarise_games(games: list, pool: Sequence[str]) -> dict[str, Any]:
    """Success (mean over words of each word's win rate, with its interval over words) under the
    rule played and the strict rule, valid questions, bits gained, games that reached ≤ 2
    candidates or that the answers singled the secret out in, and guessing behaviour."""
    from games.rules import normalise_question
    from games.types import Verdict

    guesses = guess_questions(tuple(pool))
    seen = consistency(games, pool, guesses)
    left = seen["left"]
    turns = [t for g in games for t in g.turns]
    per_word, success = rate_over_words(games, lambda g: g.won)
    strict_per_word, strict = rate_over_words(games, strict_win)
    is_guess = [[normalise_question(t.question) in guesses for t in g.turns] for g in games]
    first_guess = [flags.index(True) + 1 for flags in is_guess if True in flags]
    valid = sum(t.verdict in (Verdict.YES, Verdict.NO, Verdict.FINISHED) for t in turns)
    verdicts: dict[str, int] = {}
    for t in turns:
        verdicts[t.verdict.value] = verdicts.get(t.verdict.value, 0) + 1
    bits = bits_gained(games, pool)
    bits_by_word: dict[str, list[float]] = {}
    for g, b in zip(games, bits):
        bits_by_word.setdefault(g.secret, []).append(b)
    return {
        "success": success,
        "strict_success": strict,
        "pass_at_k": round(statistics.fmean(r > 0 for r in per_word.values()), 4),
        "valid_questions": share(valid, len(turns)),
        "bits_gained": round(statistics.fmean(bits), 3) if bits else None,
        "bits_available": round(math.log2(len(pool)), 3),
        "reached_2_candidates": share(sum(n <= 2 for n in left), len(games)),
        "mean_turns": round(statistics.fmean(g.n_turns for g in games), 2),
        "median_candidates_left": statistics.median(left),
        # the answers left only the secret (won games count): success if the guesser could name
        # every such word
        "singled_out_secret": share(sum(n == 1 for n in left), len(games)),
        # lost games whose answers had left only the secret: lost on naming, not on narrowing
        "lost_with_secret_singled_out": share(
            sum(n == 1 for g, n in zip(games, left) if not g.won), sum(not g.won for g in games)
        ),
        "pool_guess_rate": round(
            sum(map(sum, is_guess)) / max(len(turns), 1), 4
        ),  # turns that name a pool word
        "mean_first_guess_turn": round(statistics.fmean(first_guess), 2) if first_guess else None,
        "median_candidates_at_first_guess": statistics.median(seen["at_first_guess"])
        if seen["at_first_guess"]
        else None,
        "guesses_consistent_with_answers": share(sum(seen["consistent"]), len(seen["consistent"])),
        "verdicts": verdicts,
        "per_word": {w: round(r, 4) for w, r in per_word.items()},
        "strict_per_word": {w: round(r, 4) for w, r in strict_per_word.items()},
        "bits_per_word": {w: round(statistics.fmean(v), 3) for w, v in bits_by_word.items()},
    }


def guesser_format(model_dir: str, scale: Scale):
    """The prompt the model was trained with; the benchmark's for models not trained on games
    yet."""
    from games.llm.chat import GuesserFormat, model_guesser_prompt

    return GuesserFormat.named(
        model_guesser_prompt(model_dir) or scale.guesser_prompt, max_turns=scale.max_turns
    )


def game_config(scale: Scale):
    from games.types import GameConfig

    return GameConfig(max_turns=scale.max_turns, win_rule=scale.win_rule)


def evaluate(
    model_dir: str,
    words: Sequence[str],
    pool: Sequence[str],
    judge,
    scale: Scale,
    *,
    samples: int,
    temperature: float,
) -> dict[str, Any]:
    """`samples` games per word at `temperature` (mean@k, the protocol's success; at temperature 1
    the policy as GRPO trains it), every game seeded by its word and sample."""
    from games.guessers.llm import LLMGuesser
    from games.llm.base import SamplingParams
    from games.llm.transformers_backend import TransformersBackend, TransformersConfig
    from games.rollout import rollout

    started = time.perf_counter()
    backend = TransformersBackend(
        TransformersConfig(
            model=model_dir,
            device="cpu",
            prefix_cache_mb=512,
            max_batch_size=min(len(words) * samples, 256),
        )
    )
    guesser = LLMGuesser(
        backend,
        sampling=SamplingParams(max_new_tokens=24, temperature=temperature),
        chat_format=guesser_format(model_dir, scale),
    )
    secrets = [w for w in words for _ in range(samples)]
    seeds = [1000 * i + s for i in range(len(words)) for s in range(samples)]
    games = []
    for start in range(0, len(secrets), 256):
        games += rollout(
            guesser,
            judge,
            secrets[start : start + 256],
            seeds=seeds[start : start + 256],
            config=game_config(scale),
        )
    out = summarise_games(games, pool) | {"samples_per_word": samples, "temperature": temperature}
    out["example"] = [f"{t.question} -> {t.verdict.value}" for t in games[0].turns][:12] + [
        f"secret: {games[0].secret}"
    ]
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def naming_probe(
    model_dir: str, words: Sequence[str], pool: Sequence[str], judge, scale: Scale
) -> dict:
    """Can the model name a word once the questions have narrowed it down? For each word, the
    information-gain teacher's won game up to its final guess is the history; every pool word's
    guess ("Is it a dog?") is scored (sum of the word's token log-probs) and the word's rank
    reported: the knowledge a held-out win needs, apart from the strategy."""
    from games.guessers.infogain import InfoGainGuesser
    from games.kb.questions import phrase
    from games.llm.transformers_backend import TransformersBackend, TransformersConfig
    from games.rollout import rollout

    started = time.perf_counter()
    teacher = InfoGainGuesser(pool=list(pool), max_turns=scale.max_turns)
    games = [g for g in rollout(teacher, judge, list(words), config=game_config(scale)) if g.won]
    backend = TransformersBackend(
        TransformersConfig(model=model_dir, device="cpu", max_batch_size=64, prefix_cache_mb=256)
    )
    fmt = guesser_format(model_dir, scale)
    replies = [phrase("isa", w, guess=True) for w in pool]
    spans = [(r.index(w), r.index(w) + len(w)) for r, w in zip(replies, pool)]
    ranks = []
    for game in games:
        scores = backend.score_spans([fmt.messages(game.turns[:-1])] * len(pool), replies, spans)
        mine = scores[list(pool).index(game.secret)]
        ranks.append(sum(s > mine for s in scores))
    n = max(len(ranks), 1)
    return {
        "words": len(ranks),
        "top1": round(sum(r == 0 for r in ranks) / n, 4),
        "top5": round(sum(r < 5 for r in ranks) / n, 4),
        "median_rank": statistics.median(ranks) if ranks else None,
        "pool": len(pool),
        "seconds": round(time.perf_counter() - started, 1),
    }
