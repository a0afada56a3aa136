"""Knowledge-base benchmark: `python -m bench.kb` prints one JSON object.

- kb: nouns, features, senses, data-file size, load time;
- coverage of the shipped lists and of wordfreq's frequent WordNet nouns;
- judge answers per second (single process; every question text distinct, then repeated);
- information-gain decisions over a 5,000-word pool (ms per decision, decisions per second);
- paper_test games: KBJudge vs InfoGainGuesser through the engine, pool = dbrl/solved.txt plus
  the covered test words, 20 questions (success, mean turns, n, skipped), and the random floor.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from games.engine import TwentyQuestions
from games.guessers.infogain import InfoGainGuesser
from games.guessers.random import RandomGuesser
from games.judges.base import JudgeRequest
from games.judges.kb import KBJudge
from games.kb import DATA_PATH, DEFAULT_SENSE, KnowledgeBase, load_kb
from games.kb.candidates import candidate_model
from games.kb.wordlists import dbrl_words, lmrl_objects


def kb_stats() -> tuple[KnowledgeBase, dict]:
    started = time.perf_counter()
    kb = KnowledgeBase.load(DATA_PATH)
    kb.matrix(DEFAULT_SENSE)
    load_s = time.perf_counter() - started
    kb = load_kb()
    return kb, {
        "nouns": len(kb.nouns),
        "features": len(kb.features),
        "senses": len(kb.synset_names),
        "aliases": len(kb.aliases),
        "resolved_via": kb.meta["vias"],
        "file_bytes": DATA_PATH.stat().st_size,
        "load_s": round(load_s, 3),
        "features_per_noun": {
            m: round(kb.matrix(m).nnz / len(kb.nouns), 1) for m in ("first", "dominant", "any")
        },
    }


def coverage(kb: KnowledgeBase) -> dict:
    def share(words: list[str]) -> dict:
        missing = [w for w in words if kb.lookup(w) is None]
        return {
            "n": len(words),
            "covered": round(1 - len(missing) / len(words), 4),
            "missing": missing[:12],
        }

    return {
        "dbrl/solved": share(dbrl_words("solved")),
        "dbrl/paper_test": share(dbrl_words("paper_test")),
        "lmrl/objects": share([names[0] for names in lmrl_objects()]),
        "wordfreq_top30k_wordnet_nouns": share(kb.top_nouns),
    }


def judge_speed(kb: KnowledgeBase, n: int = 100_000) -> dict:
    """Answers per second: every question text new (parsed, the worst case), then a game-like
    mix (100k requests over the pool's questions, texts repeat), then the same mix again."""
    model = candidate_model(kb, dbrl_words("solved"))
    rng = np.random.default_rng(0)
    questions = [model.questions[i] for i in rng.permutation(len(model.questions))]
    mixed = [questions[i] for i in rng.integers(0, len(questions), n)]
    secrets = [model.words[i] for i in rng.integers(0, len(model.words), n)]
    out, judge = {}, KBJudge(kb)

    def rate(label: str, texts: list[str]) -> None:
        requests = [JudgeRequest(s, q) for s, q in zip(secrets, texts)]
        started = time.perf_counter()
        answers = judge.judge_batch(requests)
        out[f"answers_per_s_{label}"] = round(len(requests) / (time.perf_counter() - started))
        out[f"unknown_{label}"] = sum(a.verdict.value == "unknown" for a in answers)

    rate("distinct_questions", questions)
    judge = KBJudge(kb)
    rate("game_mix", mixed)
    rate("game_mix_warm", mixed)
    return out


def guesser_speed(kb: KnowledgeBase, pool_size: int = 5000, games: int = 40) -> dict:
    pool = [kb.nouns[i] for i in np.argsort(-kb.noun_zipf, kind="stable")[:pool_size]]
    started = time.perf_counter()
    guesser = InfoGainGuesser(kb, pool=pool)
    build_s = time.perf_counter() - started
    judge, times, first = KBJudge(kb), [], []
    for seed in range(games):
        env = TwentyQuestions(judge)
        env.reset(pool[(seed * 97) % len(pool)], seed)
        state = guesser.start(seed=seed)
        while not env.done:
            tic = time.perf_counter()
            ask = guesser.ask(state)
            times.append(time.perf_counter() - tic)
            if len(state.history) == 0:
                first.append(times[-1])
            guesser.observe(state, env.step(ask.question).turn)
    return {
        "pool": len(guesser.model.words),
        "questions": len(guesser.model.questions),
        "model_build_s": round(build_s, 3),
        "ms_per_decision": round(1000 * float(np.mean(times)), 3),
        "ms_first_decision": round(1000 * float(np.mean(first)), 3),
        "ms_per_decision_p95": round(1000 * float(np.percentile(times, 95)), 3),
        "decisions_per_s": round(len(times) / float(np.sum(times))),
        "decisions": len(times),
    }


def paper_test(
    kb: KnowledgeBase, guesser_kind: str = "infogain", sense: str = DEFAULT_SENSE
) -> dict:
    words = dbrl_words("paper_test")
    secrets = [w for w in words if kb.lookup(w) is not None]
    skipped = [w for w in words if kb.lookup(w) is None]
    pool = dbrl_words("solved") + secrets
    if guesser_kind == "infogain":
        guesser = InfoGainGuesser(kb, pool=pool, sense=sense)
    else:
        guesser = RandomGuesser(kb, pool=pool, sense=sense)
    judge = KBJudge(kb, sense=sense)
    started = time.perf_counter()
    turns, won_turns, unknown = [], [], 0
    for seed, secret in enumerate(secrets):
        env = TwentyQuestions(judge)
        env.reset(secret, seed)
        state = guesser.start(seed=seed)
        while not env.done:
            step = env.step(guesser.ask(state).question)
            guesser.observe(state, step.turn)
            unknown += step.turn.verdict.value == "unknown"
        turns.append(len(env.trajectory.turns))
        if env.trajectory.won:
            won_turns.append(len(env.trajectory.turns))
    return {
        "guesser": guesser.name,
        "judge": judge.name,
        "success": round(len(won_turns) / len(secrets), 4),
        "mean_turns": round(float(np.mean(turns)), 2),
        "mean_turns_won": round(float(np.mean(won_turns)), 2) if won_turns else None,
        "n": len(secrets),
        "skipped": len(skipped),
        "skipped_words": skipped,
        "pool": len(guesser.model.words),
        "unknown_answers": unknown,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> int:
    started = time.perf_counter()
    kb, stats = kb_stats()
    result = {
        "kb": stats,
        "coverage": coverage(kb),
        "judge": judge_speed(kb),
        "guesser_5000_pool": guesser_speed(kb),
        "infogain_paper_test": paper_test(kb),
        "infogain_any_paper_test": paper_test(kb, sense="any"),
        "random_paper_test": paper_test(kb, guesser_kind="random"),
    }
    result["infogain_paper_test_success"] = result["infogain_paper_test"]["success"]
    result["seconds"] = round(time.perf_counter() - started, 1)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
