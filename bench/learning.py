"""Learning benchmark in the knowledge-base world (DESIGN.md §6): `python -m bench.learning`.

The research pipeline in miniature, from scratch on this machine's CPU (2 torch threads):
1. world: a seeded pool of knowledge-base nouns, split into sft / rl / test secrets;
2. a tiny Llama built from scratch (training.tiny);
3. knowledge stage (training.knowledge): every pool word and its facts, test words included;
4. SFT (training.sft) on the information-gain teacher's games (guess bonus `teacher_guess_bonus`)
   for the sft secrets, recovery rows (wrong guesses, then the teacher's next question) and naming
   rows for the other pool words;
5. GRPO (training.grpo) from the SFT model on the rl secrets (`grpo_secret_splits`: and the SFT
   secrets), trajectory-level (StarPO, λ = 0) and per-turn ΔBelief (CIA, λ = 0.1) advantages,
   validated every 10 steps on 16 SFT secrets played greedily (forgetting shows there first);
6. evaluation on the held-out test secrets with the knowledge-base judge, for the untrained
   model, after knowledge, after SFT and after each GRPO run, two ways: `sampled`, 4 games per
   word at temperature 1 (the policy as GRPO trains it; success is mean@4 with its interval over
   words, as the protocol reports it), and `greedy`, one game per word at temperature 0. Success
   ("named the word"), valid-question rate (answered yes/no/finished), share of games that reached
   ≤ 2 candidates (the pool words consistent with every answer), guessing behaviour (when the
   first guess came, how many words were left then, how many guesses named a word the answers
   allowed), each with a 95% interval; GRPO − SFT also as a paired difference over the same words. The same on (up to
   50 of) the training secrets, to tell a model that did not fit from one that did not generalise.

Prints one JSON object (wall seconds of every stage, load averages: other processes on a small
machine slow everything down) and writes it to bench/results/learning.json. `--quick` runs a
smoke-sized version (minutes) to check the pipeline.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import math
import os
import random
import shutil
import statistics
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Sequence

RESULTS = Path(__file__).resolve().parent / "results" / "learning.json"


@dataclass(frozen=True)
class Scale:
    pool: int = 240  # candidate words (the teacher's pool and the knowledge stage's words)
    sft: int = 140  # secrets of the teacher's SFT games
    rl: int = 50  # GRPO's training secrets (never in SFT)
    test: int = 50  # held-out secrets (neither SFT nor GRPO)
    hidden: int = 128
    layers: int = 4
    intermediate: int = 384
    vocab: int = 4096
    knowledge_epochs: float = 3.0
    knowledge_lr: float = 2e-3
    knowledge_sequences: int = 16  # per word, alternating statements and answered questions
    sft_epochs: float = 20.0
    sft_lr: float = 2e-3
    sft_device_batch: int = 8  # micro-batches cut by length (batch_rebalance): smaller ones pad less
    recovery_per_game: int = 4  # DAgger-style rows per teacher game (training.sft.data.recovery_examples)
    naming_per_word: int = 16  # naming examples per pool word mixed into SFT (training.knowledge.naming; 0 = none)
    naming_sft_words: bool = False  # also for the SFT secrets (their teacher games already end in their guess)
    naming_temperature: float = 0.1  # bits: how random the naming histories' questioner is
    teacher_guess_bonus: float = 0.5  # the information-gain teacher's bonus for a guess's chance to win: at
    # 0.5 its first guess comes with 1-3 words left in most games; at 1.0 (the guesser's default) mostly 3-4,
    # which a student that names held-out words poorly copies as wrong guesses instead of narrowing further
    naming_train: str = "word"  # word: only the named word is trained ("Is it" is context); guess: the whole guess
    grpo_steps: int = 60
    grpo_secrets: int = 8
    grpo_generations: int = 8
    grpo_lr: float = 1e-4
    grpo_filter: float = 0.5
    grpo_mini_batches: int = 2  # optimizer steps per pass over a step's rollouts
    grpo_iterations: int = 1  # passes over each step's rollouts (μ; > 1 reuses them, clipped by the ratio)
    grpo_temperature: float = 1.0
    grpo_unknown_penalty: float = -1.0  # ungroundable questions (words the KB does not know) cost as a repeat
    grpo_lora: bool = False
    grpo_beta: float = 0.0
    grpo_secret_splits: str = "rl+sft"  # GRPO's training secrets: "rl", or "rl+sft" (the SFT secrets as well)
    grpo_val_secrets: int = 16  # SFT secrets played greedily every grpo_val_steps: forgetting shows here first
    grpo_val_steps: int = 10
    grpo_infogain: float = 0.0  # μ: reward per bit the answers narrow the pool's consistent candidates (0 = off)
    grpo_advantages: str = "trajectory+turn"  # the GRPO variants to run, in order
    max_turns: int = 20
    guesser_prompt: str = "short"  # games.llm.chat.GUESSER_PROMPTS: ~40 tokens instead of the paper's ~290
    eval_samples: int = 4  # games per held-out word sampled at eval_temperature (mean@k); one greedy game besides
    eval_temperature: float = 1.0  # GRPO's sampling temperature: the policy as it is trained
    seed: int = 0
    threads: int = 2  # torch threads (1 lets two sweep runs share the 2 cores; wall times then differ)


QUICK = Scale(pool=60, sft=30, rl=10, test=20, hidden=32, layers=2, intermediate=64, vocab=2048, knowledge_epochs=1,
              sft_epochs=1, grpo_steps=2, grpo_secrets=2, grpo_generations=4, max_turns=8)


# -- the world -----------------------------------------------------------------------------------
def make_world(scale: Scale) -> dict[str, list[str]]:
    """A seeded pool of KB nouns with facts whose guess question the KB grounds, and its splits."""
    from games.kb import load_kb
    from games.kb.candidates import candidate_model
    from games.wordlists import read_words
    from training.knowledge.data import word_facts

    kb = load_kb()
    coverage = kb.coverage("dominant")
    words = [w for w in read_words("dbrl/solved") if kb.lookup(w) is not None]
    random.Random(scale.seed).shuffle(words)
    candidates = [w for w in words[: 2 * scale.pool] if word_facts(kb, w, "dominant", coverage)]
    model = candidate_model(kb, candidates)
    pool = [w for i, w in enumerate(model.words) if model.guess_question[i] >= 0][: scale.pool]
    if len(pool) < scale.pool or scale.sft + scale.rl + scale.test > scale.pool:
        raise SystemExit(f"pool of {len(pool)} words cannot hold the splits")
    a, b = scale.sft, scale.sft + scale.rl
    return {"pool": pool, "sft": pool[:a], "rl": pool[a:b], "test": pool[b : b + scale.test]}


# -- evaluation -----------------------------------------------------------------------------------
def consistency(trajectories, pool: Sequence[str], guesses: frozenset[str]) -> dict[str, Any]:
    """Pool words consistent with every answer at the end of each game (1 for a won game), and for
    the guesses: how many words were left when a game first guessed, and whether each guessed word
    was one of the words the answers so far allowed (naming, apart from narrowing)."""
    import numpy as np

    from games.guessers.infogain import InfoGainGuesser
    from games.rules import normalise_question

    tracker = InfoGainGuesser(pool=list(pool))
    index = {normalise_question(tracker.model.questions[q]): i for i, q in enumerate(tracker.model.guess_question)
             if q >= 0}
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
        left.append(1 if traj.won else int(np.count_nonzero((state.data["contradictions"] == 0) & ~state.data["out"])))
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
    return frozenset(normalise_question(model.questions[q]) for q in model.guess_question
                     if q >= 0 and yes_counts[q] == 0)


def summarise_games(games: list, pool: Sequence[str]) -> dict[str, Any]:
    """Success (mean over words of each word's win rate, with its interval over words), valid
    questions, games that reached ≤ 2 candidates or that the answers singled the secret out in,
    guessing behaviour and verdicts of some games."""
    from games.metrics import mean_at_k_interval
    from games.rules import normalise_question
    from games.types import Verdict

    guesses = guess_questions(tuple(pool))
    seen = consistency(games, pool, guesses)
    left = seen["left"]
    turns = [t for g in games for t in g.turns]
    by_word: dict[str, list[bool]] = {}
    for g in games:
        by_word.setdefault(g.secret, []).append(g.won)
    rates = [statistics.fmean(w) for w in by_word.values()]
    lo, hi = mean_at_k_interval(rates)
    is_guess = [[normalise_question(t.question) in guesses for t in g.turns] for g in games]
    first_guess = [flags.index(True) + 1 for flags in is_guess if True in flags]
    valid = sum(t.verdict in (Verdict.YES, Verdict.NO, Verdict.FINISHED) for t in turns)
    verdicts: dict[str, int] = {}
    for t in turns:
        verdicts[t.verdict.value] = verdicts.get(t.verdict.value, 0) + 1
    return {
        "success": {"rate": round(statistics.fmean(rates), 4), "ci95": [round(lo, 4), round(hi, 4)],
                    "words": len(rates), "games": len(games)},
        "pass_at_k": round(statistics.fmean(any(w) for w in by_word.values()), 4),
        "valid_questions": share(valid, len(turns)),
        "reached_2_candidates": share(sum(n <= 2 for n in left), len(games)),
        "mean_turns": round(statistics.fmean(g.n_turns for g in games), 2),
        "median_candidates_left": statistics.median(left),
        # the answers left only the secret (won games count): success if the guesser could name every such word
        "singled_out_secret": share(sum(n == 1 for n in left), len(games)),
        # lost games whose answers had left only the secret: lost on naming, not on narrowing
        "lost_with_secret_singled_out": share(sum(n == 1 for g, n in zip(games, left) if not g.won),
                                              sum(not g.won for g in games)),
        "pool_guess_rate": round(sum(map(sum, is_guess)) / max(len(turns), 1), 4),  # turns that name a pool word
        "mean_first_guess_turn": round(statistics.fmean(first_guess), 2) if first_guess else None,
        "median_candidates_at_first_guess": statistics.median(seen["at_first_guess"]) if seen["at_first_guess"] else None,
        "guesses_consistent_with_answers": share(sum(seen["consistent"]), len(seen["consistent"])),
        "verdicts": verdicts,
        "per_word": {w: round(statistics.fmean(v), 4) for w, v in by_word.items()},
    }


def guesser_format(model_dir: str, scale: Scale):
    """The prompt the model was trained with; the benchmark's for models not trained on games yet."""
    from games.llm.chat import GuesserFormat, model_guesser_prompt

    return GuesserFormat.named(model_guesser_prompt(model_dir) or scale.guesser_prompt, max_turns=scale.max_turns)


def evaluate(model_dir: str, words: Sequence[str], pool: Sequence[str], judge, scale: Scale, *,
             samples: int, temperature: float) -> dict[str, Any]:
    """`samples` games per word sampled at `temperature` (mean@k, the protocol's success; the
    policy as GRPO trains it; none when `samples` is 0) and one greedy game per word."""
    from games.guessers.llm import LLMGuesser
    from games.llm.base import SamplingParams
    from games.llm.transformers_backend import TransformersBackend, TransformersConfig
    from games.rollout import rollout
    from games.types import GameConfig

    max_turns = scale.max_turns
    started = time.perf_counter()
    backend = TransformersBackend(TransformersConfig(model=model_dir, device="cpu", prefix_cache_mb=512,
                                                     max_batch_size=len(words) * max(samples, 1)))
    out: dict[str, Any] = {}
    for name, temp, k in (("sampled", temperature, samples), ("greedy", 0.0, 1)):
        if not k:
            continue
        guesser = LLMGuesser(backend, sampling=SamplingParams(max_new_tokens=24, temperature=temp),
                             chat_format=guesser_format(model_dir, scale))
        secrets = [w for w in words for _ in range(k)]
        games = rollout(guesser, judge, secrets, seeds=[1000 * i + s for i in range(len(words)) for s in range(k)],
                        config=GameConfig(max_turns=max_turns))
        out[name] = summarise_games(games, pool) | {"samples_per_word": k, "temperature": temp}
        if name == "sampled":
            out[name]["example"] = [f"{t.question} -> {t.verdict.value}" for t in games[0].turns][:12] + [
                f"secret: {games[0].secret}"]
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def naming_probe(model_dir: str, words: Sequence[str], pool: Sequence[str], judge, scale: Scale) -> dict:
    """Can the model name a word once the questions have narrowed it down? For each word, the
    information-gain teacher's won game up to its final guess is the history; every pool word's
    guess ("Is it a dog?") is scored (sum of the word's token log-probs) and the word's rank
    reported: the knowledge a held-out win needs, apart from the strategy."""
    from games.guessers.infogain import InfoGainGuesser
    from games.llm.transformers_backend import TransformersBackend, TransformersConfig
    from games.kb.questions import phrase
    from games.rollout import rollout
    from games.types import GameConfig

    max_turns = scale.max_turns
    started = time.perf_counter()
    teacher = InfoGainGuesser(pool=list(pool), max_turns=max_turns)
    games = [g for g in rollout(teacher, judge, list(words), config=GameConfig(max_turns=max_turns)) if g.won]
    backend = TransformersBackend(TransformersConfig(model=model_dir, device="cpu", max_batch_size=64,
                                                     prefix_cache_mb=256))
    fmt = guesser_format(model_dir, scale)
    replies = [phrase("isa", w, guess=True) for w in pool]
    spans = [(r.index(w), r.index(w) + len(w)) for r, w in zip(replies, pool)]
    ranks = []
    for game in games:
        chat = fmt.messages(game.turns[:-1])
        scores = backend.score_spans([chat] * len(pool), replies, spans)
        mine = scores[list(pool).index(game.secret)]
        ranks.append(sum(s > mine for s in scores))
    n = max(len(ranks), 1)
    return {"words": len(ranks), "top1": round(sum(r == 0 for r in ranks) / n, 4),
            "top5": round(sum(r < 5 for r in ranks) / n, 4), "median_rank": statistics.median(ranks) if ranks else None,
            "pool": len(pool), "seconds": round(time.perf_counter() - started, 1)}


def paired_difference(after: dict[str, float], before: dict[str, float]) -> dict[str, Any]:
    """Mean per-word difference in success rate (same words) with a normal 95% interval."""
    diffs = [after[w] - before[w] for w in before]
    n = len(diffs)
    mean = statistics.fmean(diffs)
    sd = statistics.stdev(diffs) if n > 1 else 0.0
    half = 1.959963984540054 * sd / math.sqrt(n) if n else 0.0
    return {"mean": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)],
            "words_better": sum(d > 0 for d in diffs), "words_worse": sum(d < 0 for d in diffs)}


# -- stages ------------------------------------------------------------------------------------------
def write_words(path: Path, words: Sequence[str]) -> str:
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return str(path)


def reporter_for(folder: Path):
    from training.reporting import ConsoleReporter

    if folder.exists():
        shutil.rmtree(folder)  # a fresh run (the runners would resume from old checkpoints)
    return ConsoleReporter(folder, stream=io.StringIO())


def metric_series(reporter, names: Sequence[str]) -> dict[str, list]:
    rows = [r for r in reporter.records if r["event"] == "metrics"]
    return {n: [round(r[n], 4) if isinstance(r.get(n), float) else r.get(n) for r in rows if n in r] for n in names}


def run_knowledge(scale: Scale, work: Path, base: str, pool_file: str) -> tuple[str, dict]:
    from training.knowledge.config import KnowledgeJobConfig
    from training.knowledge.trainer import run

    config = KnowledgeJobConfig(base_model=base, word_list=pool_file, epochs=scale.knowledge_epochs,
                                sequences_per_word=scale.knowledge_sequences,
                                learning_rate=scale.knowledge_lr, warmup_ratio=0.05, global_batch_size=32,
                                per_device_batch_size=16, max_tokens=256, cpu_threads=scale.threads, seed=scale.seed)
    reporter = reporter_for(work / "knowledge")
    result = run(config, reporter)
    losses = metric_series(reporter, ["loss"])["loss"]
    return result["final_checkpoint"], {"sequences": result["sequences"], "steps": result["global_step"],
                                        "loss_first_last": [losses[0], losses[-1]] if losses else None,
                                        "tokens_per_second": result.get("tokens_per_second")}


def run_sft(scale: Scale, work: Path, base: str, sft_file: str, pool: Sequence[str]) -> tuple[str, dict]:
    """training.sft on the teacher's games for the sft secrets, with recovery rows (a teacher game
    cut short, wrong guesses appended, the teacher's next question: training.sft.data) and naming
    rows for the pool words without teacher games (training.knowledge.naming: the knowledge
    stage's facts in the direction a game needs them, histories → word, from a randomised
    questioner; only the word trained). Naming rows all end in a guess: many of them teach a
    policy to guess early, hence none for the SFT secrets by default."""
    from games.guessers.infogain import InfoGainGuesser
    from games.judges.kb import KBJudge
    from games.kb import load_kb
    from games.llm.chat import GuesserFormat
    from games.wordlists import read_words
    from training.common.data import build_teacher, gather_games, select_games
    from training.knowledge.naming import naming_examples
    from training.sft.config import SFTJobConfig
    from training.sft.data import recovery_examples, turn_examples
    from training.sft.trainer import train_sft

    pool_file = write_words(work / "pool.txt", pool)
    config = SFTJobConfig(base_model=base, word_list=sft_file, pool_word_list=pool_file, teacher="infogain",
                          judge="kb:closed", epochs=scale.sft_epochs, learning_rate=scale.sft_lr, warmup_ratio=0.05,
                          global_batch_size=32, per_device_batch_size=scale.sft_device_batch, max_tokens=1024,
                          cpu_threads=scale.threads, max_turns=scale.max_turns, guesser_prompt=scale.guesser_prompt,
                          seed=scale.seed)
    reporter = reporter_for(work / "sft")
    chat_format = GuesserFormat.named(scale.guesser_prompt, max_turns=scale.max_turns)

    def make_teacher(words):
        return InfoGainGuesser(pool=list(words) if words is not None else None, max_turns=scale.max_turns,
                               guess_bonus=scale.teacher_guess_bonus)

    games = select_games(gather_games(config, reporter, judge=KBJudge(closed=True), make_teacher=make_teacher),
                         config.selection)
    teacher_rows = turn_examples(games, chat_format)
    teacher = build_teacher(config, (g.secret for g in games), make_teacher=make_teacher, pool=pool)
    recovery = recovery_examples(games, teacher, chat_format, per_game=scale.recovery_per_game,
                                 seed=scale.seed) if scale.recovery_per_game else []
    sft_words = set(read_words(sft_file))
    named = [w for w in pool if scale.naming_sft_words or w not in sft_words]
    naming = naming_examples(load_kb(), pool, words=named, chat_format=chat_format, per_word=scale.naming_per_word,
                             temperature=scale.naming_temperature, seed=scale.seed,
                             train=scale.naming_train) if scale.naming_per_word else []
    rows = teacher_rows + recovery + naming
    random.Random(scale.seed).shuffle(rows)
    result = train_sft(config, reporter, rows, kind="sft", model_path=base,
                       resolved={"games": len(games), "naming_examples": len(naming),
                                 "recovery_examples": len(recovery)})
    losses = metric_series(reporter, ["loss"])["loss"]
    teacher_turns = [g.n_turns for g in games]
    return result["final_checkpoint"], {"games": len(games), "teacher_won": sum(g.won for g in games),
                                        "teacher_mean_turns": round(statistics.fmean(teacher_turns), 2),
                                        "teacher_examples": len(teacher_rows), "recovery_examples": len(recovery),
                                        "naming_examples": len(naming), "naming_words": len(named),
                                        "naming_mean_history": round(statistics.fmean(r["turn"] for r in naming), 2)
                                        if naming else None,
                                        "steps": result["global_step"],
                                        "loss_first_last": [losses[0], losses[-1]] if losses else None,
                                        "tokens_per_second": result.get("tokens_per_second")}


GRPO_SERIES = ("reward", "success_rate", "valid_rate", "repeated_rate", "unknown_rate", "rollout/in_group_std",
               "frac_reward_zero_std", "entropy", "grad_norm", "clip_ratio/low_mean", "clip_ratio/high_mean",
               "logprob_diff/rollout_abs_mean", "mean_turns", "time/rollout_s", "time/step_s", "val/success_rate",
               "val/valid_rate", "rollout/info_gain_bits", "rollout/candidates_left")


def run_grpo(scale: Scale, work: Path, base: str, rl_words: Sequence[str], judge, advantage: str,
             val_words: Sequence[str] = (), pool: Sequence[str] = ()) -> tuple[str, dict]:
    """training.grpo from the SFT model on the rl secrets; validation on `val_words` (the SFT
    secrets: what SFT fitted, and what a learning rate too high forgets first)."""
    from training.grpo.config import GRPOConfig
    from training.grpo.trainer import run

    belief = 0.1 if advantage == "turn" else 0.0
    config = GRPOConfig(base_model=base, steps=scale.grpo_steps, secrets_per_step=scale.grpo_secrets,
                        num_generations=scale.grpo_generations, max_turns=scale.max_turns,
                        temperature=scale.grpo_temperature, max_completion_length=24, advantage=advantage,
                        belief_coef=belief, infogain_coef=scale.grpo_infogain, rollout_filter_ratio=scale.grpo_filter,
                        learning_rate=scale.grpo_lr,
                        unknown_penalty=scale.grpo_unknown_penalty, lora=scale.grpo_lora, beta=scale.grpo_beta,
                        mini_batches=scale.grpo_mini_batches, num_iterations=scale.grpo_iterations,
                        forward_batch_size=16, save_steps=scale.grpo_steps, cpu_threads=scale.threads,
                        val_secrets=scale.grpo_val_secrets if val_words else 0, val_steps=scale.grpo_val_steps,
                        seed=scale.seed)
    reporter = reporter_for(work / f"grpo-{advantage}")
    result = run(config, reporter, model_path=base, judge=judge, words=list(rl_words),
                 val_words=list(val_words) or None, pool=list(pool) or None)
    warnings = [r["message"] for r in reporter.records if r["event"] == "log" and r["level"] == "warning"]
    return result["final_checkpoint"], {"config": {k: v for k, v in asdict(config).items() if k in (
        "steps", "secrets_per_step", "num_generations", "advantage", "belief_coef", "infogain_coef",
        "rollout_filter_ratio", "learning_rate", "lora", "beta", "unknown_penalty", "epsilon", "epsilon_high",
        "loss_agg_mode", "mini_batches", "num_iterations", "temperature", "val_secrets", "val_steps")},
        "per_step": metric_series(reporter, GRPO_SERIES), "warnings": warnings, "validation": result["validation"]}


def cpu_model() -> str:
    """The CPU's model name and widest vector unit: wall times differ ~3× between machines here."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), [])
    vector = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "other"
    return f"{name} ({vector})"


# -- main -------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.learning", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke-sized run (does not write the results file)")
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("DATA_DIR", "var")) / "bench-learning",
                        help="folder for models and checkpoints (replaced)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="override a Scale field")
    parser.add_argument("--until", choices=("knowledge", "sft", "grpo_trajectory", "grpo_turn", "all"), default="all",
                        help="stop after this stage (a pilot: does not write the results file)")
    parser.add_argument("--reuse", choices=("none", "knowledge", "sft", "grpo"), default="none",
                        help="take the models of this stage and the ones before it from an earlier run in --work "
                             "with the same scale (wall times as that run measured them; listed as reused_stages)")
    args = parser.parse_args(argv)

    import torch

    from games.judges.kb import KBJudge
    from training.tiny import build_tiny_model

    scale = QUICK if args.quick else Scale()
    for item in args.set:
        key, _, value = item.partition("=")
        kind = type(getattr(scale, key))
        if kind is bool and value.lower() not in ("true", "false", "1", "0"):
            raise SystemExit(f"--set {key}: true or false, got {value!r}")
        scale = replace(scale, **{key: value.lower() in ("true", "1") if kind is bool else kind(value)})
    if not scale.grpo_advantages or not set(scale.grpo_advantages.split("+")) <= {"trajectory", "turn"}:
        raise SystemExit(f"--set grpo_advantages: trajectory, turn or both joined by +, got {scale.grpo_advantages!r}")
    if not set(scale.grpo_secret_splits.split("+")) <= {"rl", "sft"}:
        raise SystemExit(f"--set grpo_secret_splits: rl or rl+sft, got {scale.grpo_secret_splits!r}")
    torch.set_num_threads(scale.threads)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    timings: dict[str, float] = {}
    out: dict[str, Any] = {"scale": asdict(scale), "load_average_start": list(os.getloadavg()),
                           "cpu": cpu_model(), "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads()}

    def timed(name: str, fn, *a, **k):
        t = time.perf_counter()
        value = fn(*a, **k)
        timings[name] = round(time.perf_counter() - t, 1)
        print(json.dumps({"stage": name, "seconds": timings[name], "load": os.getloadavg()[0]}), flush=True)
        return value

    world = timed("world", make_world, scale)
    files = {k: write_words(work / f"{k}.txt", v) for k, v in world.items()}
    out["world"] = {k: len(v) for k, v in world.items()} | {"test_words": world["test"][:20]}
    judge = KBJudge(closed=True)  # the miniature's world is the KB's: every fact it lacks is a No
    tiny = str(timed("build_tiny", build_tiny_model, work / "tiny", hidden=scale.hidden, layers=scale.layers,
                     heads=4, kv_heads=4, intermediate=scale.intermediate, vocab_size=scale.vocab, seed=scale.seed))
    evals: dict[str, Any] = {}
    seen: dict[str, Any] = {}

    def ev(name: str, model_dir: str, trained_on: Sequence[str] = (), sampled: bool = True):
        """Held-out test secrets; with `trained_on`, also the training secrets of the stages so far
        (at most 50 of each: does the model fit what it was taught, or fail to generalise?) and,
        for SFT, GRPO's secrets before GRPO sees them.
        `sampled=False`: greedy games only (a model that cannot yet ask a question at all, whose
        sampled games are long strings of random tokens, slow to generate and all invalid).
        A reused stage's evaluation is read back from the earlier run when it stored one."""
        stored = work / f"eval-{name}.json"
        if name in reused and stored.is_file():
            evals[name], seen_here, timings[f"eval_{name}"] = json.loads(stored.read_text())
            if seen_here:
                seen[name] = seen_here
            return
        evals[name] = timed(f"eval_{name}", evaluate, model_dir, world["test"], world["pool"], judge, scale,
                            samples=scale.eval_samples if sampled else 0, temperature=scale.eval_temperature)
        for split in trained_on:
            result = evaluate(model_dir, world[split][:50], world["pool"], judge, scale,
                              samples=scale.eval_samples, temperature=scale.eval_temperature)
            seen.setdefault(name, {})[f"{split}_secrets"] = {mode: {k: result[mode][k] for k in (
                "success", "valid_questions", "reached_2_candidates", "mean_turns", "verdicts")}
                for mode in ("sampled", "greedy")}
        stored.write_text(json.dumps([evals[name], seen.get(name), timings[f"eval_{name}"]]))

    probe_words = world["test"][:40]
    pilot = args.until != "all"
    reused = {"none": (), "knowledge": ("knowledge",), "sft": ("knowledge", "sft"),
              "grpo": ("knowledge", "sft", "grpo_trajectory", "grpo_turn")}[args.reuse]

    def stage(name: str, fn, *a) -> tuple[str, dict]:
        """Run a training stage, or with --reuse take its stored result from an earlier run."""
        stored = work / f"{name}-result.json"
        if name in reused and stored.is_file():
            folder, info, seconds = json.loads(stored.read_text())
            timings[name] = seconds  # measured by the earlier process
            out.setdefault("reused_stages", []).append(name)
            return folder, info
        folder, info = timed(name, fn, *a)
        stored.write_text(json.dumps([folder, info, timings[name]]))
        return folder, info

    def finish_pilot() -> int:
        out["evaluation"], out["evaluation_training_secrets"] = evals, seen
        print(json.dumps(out, indent=1))
        return 0

    ev("untrained", tiny, sampled=False)
    knowledge_dir, out["knowledge"] = stage("knowledge", run_knowledge, scale, work, tiny, files["pool"])
    ev("knowledge", knowledge_dir, sampled=False)
    out["knowledge"]["naming_probe_test"] = timed("probe_knowledge", naming_probe, knowledge_dir, probe_words,
                                                  world["pool"], judge, scale)
    if args.until == "knowledge":
        return finish_pilot()
    sft_dir, out["sft"] = stage("sft", run_sft, scale, work, knowledge_dir, files["sft"], world["pool"])
    ev("sft", sft_dir, trained_on=("sft", "rl"))  # rl: GRPO's secrets, before GRPO
    out["sft"]["naming_probe_test"] = timed("probe_sft", naming_probe, sft_dir, probe_words, world["pool"], judge,
                                            scale)
    if args.until == "sft":
        return finish_pilot()
    out["grpo"] = {}
    for advantage in scale.grpo_advantages.split("+"):
        name = f"grpo_{advantage}"
        grpo_words = [w for split in scale.grpo_secret_splits.split("+") for w in world[split]]
        folder, out["grpo"][advantage] = stage(name, run_grpo, scale, work, sft_dir, grpo_words, judge, advantage,
                                               world["sft"], world["pool"])
        ev(name, folder, trained_on=("sft", "rl"))
        for mode in ("sampled", "greedy"):
            evals[name][mode]["success_minus_sft_paired"] = paired_difference(evals[name][mode]["per_word"],
                                                                              evals["sft"][mode]["per_word"])
        if args.until == name:
            return finish_pilot()
    if pilot:  # --until a GRPO variant that grpo_advantages leaves out
        return finish_pilot()
    out["evaluation"], out["evaluation_training_secrets"] = evals, seen

    def targets(mode: str) -> dict[str, bool]:
        sft = evals["sft"][mode]
        return {
            "sft_valid_questions>=0.8": sft["valid_questions"]["rate"] >= 0.8,
            "sft_reached_2_candidates>=0.8": sft["reached_2_candidates"]["rate"] >= 0.8,
            "sft_success>=0.25": sft["success"]["rate"] >= 0.25,
            **{f"grpo_{a}_success>=sft+0.05_without_valid_drop": (
                evals[f"grpo_{a}"][mode]["success"]["rate"] >= sft["success"]["rate"] + 0.05
                and evals[f"grpo_{a}"][mode]["valid_questions"]["rate"] >= sft["valid_questions"]["rate"])
               for a in scale.grpo_advantages.split("+")},
        }

    out["targets"] = {"sampled": targets("sampled"), "greedy": targets("greedy")}
    timings["total"] = round(sum(timings.values()), 1)  # every stage, reused ones as their process measured them
    timings["this_process"] = round(time.perf_counter() - began, 1)
    out["seconds"] = timings
    out["targets"]["total_under_45_minutes"] = timings["total"] < 45 * 60
    for stage_evals in evals.values():  # per-word rates served the paired differences
        for mode in ("sampled", "greedy"):
            stage_evals.get(mode, {}).pop("per_word", None)
    out["load_average_end"] = list(os.getloadavg())
    text = json.dumps(out, indent=1)
    print(text)
    if not args.quick and not pilot:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
