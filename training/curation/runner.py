"""Curation: candidates -> judge filter -> solvability games -> difficulty -> splits -> subsets.

`run(config, reporter, inputs=...)` serves the web job (which resolves names in the database)
and the CLI (`python -m training.curation`, which resolves them with games.registry and the
shipped word lists). It returns the curated entries, the funnel and a summary, and writes
curated.jsonl, dropped.jsonl and funnel.json to the reporter's output folder.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from games.guessers.base import Guesser
from games.judges.base import Judge
from games.kb import KnowledgeBase, load_kb
from games.registry import precision_record
from training.common.models import cpu_threads
from training.curation import stages
from training.curation.config import CurationConfig
from training.curation.funnel import Stage, log_drops
from training.curation.splits import assign_splits, subset_counts, training_subsets
from training.reporting import Reporter

# progress: the solvability games take nearly all the time
P_SOURCE, P_JUDGE, P_GAMES = 0.01, 0.05, 0.95


@dataclass
class Inputs:
    judge: Judge
    make_guesser: Callable[
        [list[str] | None], Guesser
    ]  # candidate pool (None = every KB noun) -> guesser
    lists: dict[str, list[tuple[str, str]]] | None = (
        None  # source=word_lists: name -> (word, category)
    )
    fairness: Any = None  # an LLM backend for the optional fairness question
    kb: KnowledgeBase | None = None


@dataclass
class CurationResult:
    entries: list[dict]  # word, category, split, difficulty, solve_rate, mean_questions, stats
    funnel: list[dict]
    summary: dict = field(default_factory=dict)


@dataclass
class _Funnel:
    """The stages done so far and how long each took; funnel.json is rewritten after each."""

    out_dir: Path
    reporter: Reporter
    done: list[Stage] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def finish(self, stage: Stage, t0: float) -> None:
        stage.check()
        self.done.append(stage)
        self.timings[stage.name] = round(time.perf_counter() - t0, 2)
        log_drops(stage, self.reporter.log)
        self.reporter.log(
            f"{stage.name}: {stage.n_in} in, {len(stage.kept)} out, {stage.n_dropped} dropped"
        )
        _write_funnel(self.out_dir, self.done)


def run(config: CurationConfig, reporter: Reporter, *, inputs: Inputs) -> CurationResult:
    """The curation; torch uses every core this process may run on meanwhile (workers start
    with one thread)."""
    with cpu_threads(0):
        return _run(config, reporter, inputs)


def _run(config: CurationConfig, reporter: Reporter, inputs: Inputs) -> CurationResult:
    started = time.perf_counter()
    kb = inputs.kb or load_kb()
    funnel = _Funnel(Path(reporter.output_dir), reporter)
    source = _source_stage(config, inputs, kb, funnel)
    judged, facts = _judge_stage(config, inputs, kb, funnel, source)
    guesser, games, solvable = _solvability_stage(config, inputs, funnel, judged)
    difficulty, splits, subsets = _rating_stages(config, funnel, games, solvable)

    entries = [
        _entry(
            c,
            games[c.word],
            difficulty[c.word],
            splits[c.word],
            subsets[c.word],
            facts.get(c.word, {}),
        )
        for c in solvable.kept
    ]
    stages_done = [s.to_dict() for s in funnel.done]
    _write_outputs(funnel.out_dir, entries, funnel.done, reporter)
    detail = {s.name: s.detail for s in funnel.done}
    summary = {
        "candidates": source.n_in,
        "kept": len(entries),
        "games": sum(r.games for r in games.values()),
        "splits": detail["splits"]["sizes"],
        "subsets": detail["training subsets"]["counts"],
        "guesser": guesser.name,
        "judge": inputs.judge.name,
        "precision": precision_record(config.precision, guesser=guesser, judge=inputs.judge),
        "knowledge_base": {
            "source": kb.meta.get("source", ""),
            "nouns": len(kb.nouns),
            "features": len(kb.features),
        },
        "seconds": round(time.perf_counter() - started, 1),
        "stage_seconds": funnel.timings,
    }
    reporter.progress(P_GAMES + 0.02, f"{len(entries)} words curated")
    return CurationResult(entries=entries, funnel=stages_done, summary=summary)


def _source_stage(
    config: CurationConfig, inputs: Inputs, kb: KnowledgeBase, funnel: _Funnel
) -> Stage:
    """1. The candidates: the given word lists, the pasted text or the KB's top nouns."""
    t0 = time.perf_counter()
    if config.source == "word_lists":
        source = stages.source_lists(inputs.lists or {})
    elif config.source == "text":
        source = stages.source_text(config.words)
    else:
        source = stages.source_top_nouns(kb, config.top_n)
    funnel.finish(source, t0)
    funnel.reporter.progress(P_SOURCE, f"source: {len(source.kept)} candidates")
    return source


def _judge_stage(
    config: CurationConfig, inputs: Inputs, kb: KnowledgeBase, funnel: _Funnel, source: Stage
) -> tuple[Stage, dict[str, dict]]:
    """2. The judge filter: (the stage, the facts found per word); enough words must pass it."""
    reporter = funnel.reporter
    t0 = time.perf_counter()
    judged, facts = stages.judge_filter(
        source.kept,
        config=config,
        kb=kb,
        judge=inputs.judge,
        fairness=inputs.fairness,
        progress=lambda f: reporter.progress(P_SOURCE + f * (P_JUDGE - P_SOURCE), "fairness judge"),
    )
    funnel.finish(judged, t0)
    if config.split_total_count > len(judged.kept):
        raise ValueError(
            f"the splits need {config.split_total_count} words but only {len(judged.kept)} passed "
            "the judge filter"
        )
    if not judged.kept:
        raise ValueError("no candidate passed the judge filter")
    return judged, facts


def _solvability_stage(
    config: CurationConfig, inputs: Inputs, funnel: _Funnel, judged: Stage
) -> tuple[Guesser, dict[str, stages.WordGames], Stage]:
    """3. Solvability: `samples` games per judged word; (the guesser, the games per word, the
    stage of the words solved often enough)."""
    reporter = funnel.reporter
    t0 = time.perf_counter()
    words = [c.word for c in judged.kept]
    guesser = inputs.make_guesser(words if config.guesser_pool == "candidates" else None)
    reporter.log(
        f"solvability: {config.samples} games per word, {guesser.name} against {inputs.judge.name}"
        + (f" (answers flipped with p={config.answer_noise})" if config.answer_noise else "")
    )
    games = stages.solvability(
        words,
        config=config,
        guesser=guesser,
        judge=inputs.judge,
        reporter=reporter,
        progress=lambda f, msg: reporter.progress(P_JUDGE + f * (P_GAMES - P_JUDGE), msg),
    )
    solvable = _solvable(judged, games, config)
    funnel.finish(solvable, t0)
    return guesser, games, solvable


def _rating_stages(
    config: CurationConfig,
    funnel: _Funnel,
    games: dict[str, stages.WordGames],
    solvable: Stage,
) -> tuple[dict[str, float], dict[str, str], dict[str, list[str]]]:
    """4. difficulty, 5. splits, 6. training subsets of the solvable words (each a funnel stage
    that keeps every word): (difficulty, split and subsets per word)."""
    t0 = time.perf_counter()
    kept = [c.word for c in solvable.kept]
    difficulty = stages.difficulties(games, config.difficulty)
    rated = Stage(
        "difficulty",
        len(kept),
        kept=list(solvable.kept),
        detail={"model": config.difficulty, "quantiles": _quantiles([difficulty[w] for w in kept])},
    )
    funnel.finish(rated, t0)
    t0 = time.perf_counter()
    splits = assign_splits(kept, config)
    split_stage = Stage(
        "splits",
        len(kept),
        kept=list(solvable.kept),
        detail={
            "sizes": {
                s: sum(v == s for v in splits.values()) for s in ("val", "test", "sft", "rl", "")
            },
            "seed": config.seed,
            "split_by": config.split_by,
        },
    )
    funnel.finish(split_stage, t0)
    t0 = time.perf_counter()
    subsets = training_subsets(splits, {w: games[w].solve_rate for w in kept}, config)
    subset_stage = Stage(
        "training subsets",
        len(kept),
        kept=list(solvable.kept),
        detail={"counts": subset_counts(subsets, config)},
    )
    funnel.finish(subset_stage, t0)
    return difficulty, splits, subsets


def _solvable(judged: Stage, games: dict[str, stages.WordGames], config: CurationConfig) -> Stage:
    """The judged candidates solved in at least `min_solved` of their `samples` games."""
    solvable = Stage(
        "solvability",
        len(judged.kept),
        detail={
            "games": sum(r.games for r in games.values()),
            "k": config.samples,
            "min_solved": config.min_solved,
            "solve_rate_histogram": _histogram([r.solve_rate for r in games.values()]),
        },
    )
    reason = f"solved fewer than {config.min_solved} of {config.samples} games"
    for cand in judged.kept:
        r = games[cand.word]
        if r.solved >= config.min_solved:
            solvable.kept.append(cand)
        else:
            solvable.drop(f"{cand.word} ({r.solved}/{r.games})", reason)
    return solvable


def _entry(
    cand, games: stages.WordGames, difficulty: float, split: str, subsets: list[str], facts: dict
) -> dict:
    stats = {
        "games": games.games,
        "solved": games.solved,
        "mean_turns": round(games.turns / games.games, 3) if games.games else None,
        "subsets": subsets,
        "sources": list(cand.sources),
    }
    stats.update(
        {k: v for k, v in facts.items() if k in ("lexname", "features", "hypernyms", "kb_noun")}
    )
    if cand.raw:
        stats["given_as"] = cand.raw
    mean_q = games.mean_questions
    return {
        "word": cand.word,
        "category": cand.category or facts.get("lexname", "").removeprefix("noun."),
        "split": split,
        "difficulty": round(float(difficulty), 6),
        "solve_rate": games.solve_rate,
        "mean_questions": round(mean_q, 3) if mean_q is not None else None,
        "stats": stats,
    }


def _histogram(rates: list[float], bins: int = 10) -> list[int]:
    counts, _ = np.histogram(np.asarray(rates, dtype=float), bins=bins, range=(0.0, 1.0))
    return counts.tolist()


def _quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    q = np.quantile(np.asarray(values, dtype=float), [0.0, 0.25, 0.5, 0.75, 1.0])
    return dict(zip(("min", "q25", "median", "q75", "max"), (round(float(v), 4) for v in q)))


def _write_funnel(out_dir: Path, done: list[Stage]) -> None:
    """funnel.json after every stage: the run page shows the funnel while the job is running."""
    tmp = out_dir / "funnel.json.tmp"
    tmp.write_text(json.dumps({"stages": [s.to_dict() for s in done]}, indent=1))
    tmp.replace(out_dir / "funnel.json")


def _write_outputs(
    out_dir: Path, entries: list[dict], done: list[Stage], reporter: Reporter
) -> None:
    curated, dropped = out_dir / "curated.jsonl", out_dir / "dropped.jsonl"
    with curated.open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(e) + "\n" for e in entries)
    with dropped.open("w", encoding="utf-8") as f:
        for stage in done:
            for reason, words in stage.dropped.items():
                f.writelines(
                    json.dumps({"stage": stage.name, "reason": reason, "word": w}) + "\n"
                    for w in words
                )
    for kind, path in (
        ("curation-words", curated),
        ("curation-dropped", dropped),
        ("curation-funnel", out_dir / "funnel.json"),
    ):
        reporter.artifact(kind, path.name, path)
