"""The evaluation job on the web side: resolve names to models and words, store every game."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from django.core.exceptions import ValidationError

from games.judges.base import playable_words
from games.llm.base import PAPER_VAL_SAMPLING
from games.metrics import summarise
from training import evaluation
from training.evaluation.config import EvaluationConfig
from webapp.catalog.builders import guesser_for, judge_for
from webapp.catalog.models import ModelSpec, WordListEntry
from webapp.catalog.selectors import word_list_latest
from webapp.jobs.kinds.checks import check_model, check_word_list
from webapp.play.models import Game
from webapp.play.records import trajectories_store, trajectory_of

# The standard evaluation (the leaderboard's setting): KB judge, the paper's test words, k=8, 20
# turns.
STANDARD_EVALUATION = {"judge": "kb", "word_list": "dbrl/paper_test", "samples": 8, "max_turns": 20}


def standard_evaluation(guesser: str) -> dict:
    """The params of a standard evaluation job for `guesser`."""
    return {"guesser": guesser, **STANDARD_EVALUATION}


def check(config: EvaluationConfig) -> None:
    """Refuse references that do not exist, before anything is queued."""
    errors: dict = {}
    check_model(errors, "guesser", config.guesser, "guesser")
    check_model(errors, "judge", config.judge, "judge")
    check_word_list(errors, "word_list", config.word_list, config.split)
    if config.pool_word_list:
        check_word_list(errors, "pool_word_list", config.pool_word_list)
    if errors:
        raise ValidationError(errors)


def evaluation_words(config: EvaluationConfig) -> tuple[list[str], dict[str, int]]:
    entries = WordListEntry.objects.filter(
        word_list=word_list_latest(config.word_list)
    ).select_related("word")
    if config.split:
        entries = entries.filter(split=config.split)
    pairs = list(entries.order_by("id").values_list("word__text", "word_id"))
    if config.limit:
        pairs = pairs[: config.limit]
    return [w for w, _ in pairs], dict(pairs)


def run(config: EvaluationConfig, reporter) -> dict:
    guesser_spec = ModelSpec.objects.get(name=config.guesser)
    judge_spec = ModelSpec.objects.get(name=config.judge)
    word_list = word_list_latest(config.word_list)
    words, word_ids = evaluation_words(config)
    judge = judge_for(judge_spec, precision=config.precision)
    playable, skipped = playable_words(judge, words)
    if skipped:
        reporter.log(
            f"skipped {len(skipped)} words the judge cannot play: {', '.join(skipped[:20])}",
            level="warning",
        )
    pool = None
    if config.pool_word_list:
        pool_words, _ = evaluation_words(
            EvaluationConfig(word_list=config.pool_word_list, guesser="-", judge="-")
        )
        pool = list(dict.fromkeys([*pool_words, *playable]))  # the secret must be a candidate
    sampling = PAPER_VAL_SAMPLING if config.sampling == "paper" else None
    guesser = guesser_for(guesser_spec, pool=pool, precision=config.precision, sampling=sampling)
    job_id = reporter.job_id

    def store(trajectories, sample_indices):
        with (
            reporter.fenced()
        ):  # only while this worker's claim holds: a superseded one stores nothing
            trajectories_store(
                trajectories,
                guesser=guesser_spec,
                judge=judge_spec,
                job_id=job_id,
                word_list=word_list,
                sample_indices=sample_indices,
                words=word_ids,
            )

    done = set(Game.objects.filter(job_id=job_id).values_list("secret", "sample_index"))
    progress = evaluation.run(
        config, reporter, guesser=guesser, judge=judge, words=playable, store=store, done=done
    )
    results = {**evaluation_results(job_id, k=config.samples), **progress, "skipped_words": skipped}
    decoding = getattr(guesser, "sampling", None)  # a language model's, as it played
    if decoding is not None:
        results["sampling"] = {"name": config.sampling, **dataclasses.asdict(decoding)}
    from webapp.leaderboards.services import leaderboards_refresh

    leaderboards_refresh(finishing_jobs=[job_id])  # on the boards right away (finished next)
    return results


def evaluation_results(job_id: int, k: int) -> dict:
    """Metrics over every game the job stored (all attempts), with a breakdown by difficulty."""
    games = list(
        Game.objects.filter(job_id=job_id)
        .select_related("guesser", "judge", "word")
        .prefetch_related("turns")
    )
    if not games:
        return {"n_games": 0}
    trajectories = [trajectory_of(g) for g in games]
    results = summarise(trajectories, k=k).to_dict()
    band_of = difficulty_bands(job_id, games)
    by_band = defaultdict(list)
    for game, traj in zip(games, trajectories):
        by_band[band_of.get(game.secret, "unknown")].append(traj)
    results["by_difficulty"] = {
        band: summarise(ts, k=k).to_dict() for band, ts in sorted(by_band.items())
    }
    return results


def difficulty_bands(job_id: int, games: list[Game]) -> dict[str, str]:
    """Curated difficulty where the word list has it, else word frequency (rarer words are
    harder)."""
    word_list_id = games[0].word_list_id
    curated = dict(
        WordListEntry.objects.filter(
            word_list_id=word_list_id, difficulty__isnull=False
        ).values_list("word__text", "difficulty")
    )
    bands = {}
    for game in games:
        if game.secret in curated:
            d = curated[game.secret]
            bands[game.secret] = "easy" if d < -0.5 else "hard" if d > 0.5 else "medium"
        elif game.word is not None and game.word.zipf_frequency is not None:
            z = game.word.zipf_frequency
            bands[game.secret] = (
                "frequent (zipf>=4.5)" if z >= 4.5 else "rare (zipf<3.5)" if z < 3.5 else "common"
            )
    return bands
