"""The trained guessers shipped in games/data/models/: their model specs with provenance, and
their seeded evaluation on their held-out words (a stored snapshot of games, imported as a
finished evaluation job) so the models board and the ability scale show them at first start; the
information-gain guesser's snapshot on the same words, judge and rule puts the strong baseline
beside them.

Two kinds: the tiny from-scratch guessers of the knowledge-base miniature (`python -m
bench.learning.ship`: full weights, a 400-word pool seeded as a word list, measured against the
closed-world KB judge) and guessers on a pretrained base (`guesser.json` names its `base`, a
model built by `make setup`; the folder holds only the LoRA adapter; measured on the paper's
word list against the judge it names)."""

from __future__ import annotations

import gzip
import json
import logging
from dataclasses import asdict
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from games.types import Trajectory
from games.wordlists import read_words
from training.evaluation.config import EvaluationConfig
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec, Split, WordList
from webapp.catalog.services import SeedEntry, word_list_create

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = ROOT / "games" / "data" / "models"
EVALUATION_DIR = MODELS_DIR / "evaluation"  # <name>.jsonl.gz games + evaluation.json provenance
POOL_LIST = "bench-learning/pool"
POOL_SPLITS = {"sft": Split.SFT, "rl": Split.RL, "val": Split.VAL, "test": Split.TEST}
log = logging.getLogger(__name__)
JUDGE = "kb-closed"  # the seeded closed-world KB judge: the judge the guessers were measured with


def shipped_guessers(directory: Path = MODELS_DIR) -> list[tuple[str, Path, dict]]:
    """(name, folder, settings from guesser.json) of every shipped guesser, by name."""
    return [
        (p.parent.name, p.parent, json.loads(p.read_text(encoding="utf-8")))
        for p in sorted(directory.glob("*/guesser.json"))
    ]


def on_base(settings: dict) -> bool:
    """Whether a shipped guesser is an adapter on a pretrained base (else a tiny full model)."""
    return bool(settings.get("base"))


def held_out_success(settings: dict) -> tuple[float, list[float], int]:
    """(success, its 95% interval, words) on the held-out test words: the shipped weights' own
    `python -m games eval` run, else the benchmark's evaluation of them, else the recorded one."""
    results = settings["results"]
    cli = results.get("cli")
    if cli:
        return cli["success_rate"], cli["success_ci95"], cli["n_words"]
    test = results["shipped"].get("test") or results["recorded"]["test"]
    return test["success"]["rate"], test["success"]["ci95"], test["success"]["words"]


def guesser_description(settings: dict) -> str:
    p = settings["provenance"]
    success, lo_hi, words = held_out_success(settings)
    if on_base(settings):
        return (
            f"{settings['base']} + a LoRA adapter trained here ({p['trained']}). It won "
            f"{100 * success:.1f}% [{100 * lo_hi[0]:.1f}, {100 * lo_hi[1]:.1f}] of games on "
            f"{words} held-out words of {settings['word_list']} against the {settings['judge']} "
            f"judge ({settings['win_rule']} rule). See its MODEL_CARD.md."
        )
    return (
        f"Tiny neural guesser trained here ({p['trained']}; bench.learning seed {p['seed']}). It "
        f"knows only its pool of {len(read_words(str(ROOT / settings['pool'])))} words "
        f"({POOL_LIST}): it won {100 * success:.1f}% "
        f"[{100 * lo_hi[0]:.1f}, {100 * lo_hi[1]:.1f}] of games on its "
        f"{words} held-out test words. See its MODEL_CARD.md."
    )


def seed_pool_word_list(directory: Path = MODELS_DIR) -> str | None:
    """The shipped guessers' pool as version 1 of POOL_LIST, each word with its split."""
    guessers = [g for g in shipped_guessers(directory) if not on_base(g[2])]
    if not guessers or WordList.objects.filter(name=POOL_LIST, version=1).exists():
        return None
    settings = guessers[0][2]
    pool = directory / "pool"
    split_of = {
        w: split for s, split in POOL_SPLITS.items() for w in read_words(str(pool / f"{s}.txt"))
    }
    p = settings["provenance"]
    word_list_create(
        name=POOL_LIST,
        version=1,
        entries=[
            SeedEntry(w, split=split_of.get(w, ""))
            for w in read_words(str(ROOT / settings["pool"]))
        ],
        source=f"bench.learning world seed {p['world_seed']} (commit {p['bench_commit'][:12]})",
        license="project",
        description="The learning benchmark's 400 knowledge-base nouns with their splits: every "
        "word the shipped tiny guessers know (sft / rl secrets played in training; val and test "
        "held out).",
        provenance={
            "bench_commit": p["bench_commit"],
            "world_seed": p["world_seed"],
            "files": str(pool.relative_to(ROOT)),
        },
    )
    return POOL_LIST


def base_guesser_spec_fields(folder: Path, settings: dict) -> dict:
    """An adapter on a pretrained base: the base by name (resolved to its built folder when the
    model loads), the folder as the adapter."""
    p = settings["provenance"]
    return dict(
        kind=ModelKind.TRANSFORMERS,
        role=ModelRole.GUESSER,
        path=settings["base"],
        adapter_path=str(folder),
        sampling=settings["sampling"],
        options={
            "judge": settings["judge"],
            "word_list": settings["word_list"],
            "max_turns": settings["max_turns"],
            "win_rule": settings["win_rule"],
            "held_out_success": dict(
                zip(("rate", "ci95", "words"), held_out_success(settings), strict=True)
            ),
            "provenance": {k: p[k] for k in ("arm", "seed", "bench_commit", "command")},
            "model_card": card_path(folder),
        },
        description=guesser_description(settings),
    )


def card_path(folder: Path) -> str:
    """The model card's path, relative to the project when the folder is inside it."""
    card = folder / "MODEL_CARD.md"
    return str(card.relative_to(ROOT)) if card.is_relative_to(ROOT) else str(card)


def guesser_spec_fields(folder: Path, settings: dict) -> dict:
    if on_base(settings):
        return base_guesser_spec_fields(folder, settings)
    p = settings["provenance"]
    return dict(
        kind=ModelKind.TRANSFORMERS,
        role=ModelRole.GUESSER,
        path=str(folder),
        sampling=settings["sampling"],
        options={
            "pool_word_list": POOL_LIST,
            "judge": JUDGE,
            "max_turns": settings["max_turns"],
            "win_rule": settings["win_rule"],
            "held_out_success": dict(
                zip(("rate", "ci95", "words"), held_out_success(settings), strict=True)
            ),
            "provenance": {
                k: p[k] for k in ("arm", "seed", "world_seed", "bench_commit", "command")
            },
            "model_card": str((folder / "MODEL_CARD.md").relative_to(ROOT)),
        },
        description=guesser_description(settings),
    )


def seed_guesser_specs(directory: Path = MODELS_DIR) -> list[str]:
    """Register every shipped guesser (path and options kept up to date: a clone elsewhere moves
    the folder)."""
    created = []
    for name, folder, settings in shipped_guessers(directory):
        fields = guesser_spec_fields(folder, settings)
        spec, was_created = ModelSpec.objects.get_or_create(name=name, defaults=fields)
        if was_created:
            created.append(name)
        elif not is_shipped_spec(spec):
            log.warning(
                "model spec %s is not the shipped guesser of that name: left as it is", name
            )
        elif (
            spec.path != fields["path"]
            or spec.options != fields["options"]
            or spec.adapter_path != fields.get("adapter_path", spec.adapter_path)
        ):
            ModelSpec.objects.filter(pk=spec.pk).update(
                path=fields["path"],
                options=fields["options"],
                adapter_path=fields.get("adapter_path", spec.adapter_path),
            )
    return created


def is_shipped_spec(spec: ModelSpec) -> bool:
    """Whether the seed registered this spec (a person's spec of the same name is not touched)."""
    card = str(spec.options.get("model_card", ""))
    return spec.kind == ModelKind.TRANSFORMERS and card.endswith(f"/{spec.name}/MODEL_CARD.md")


def is_seeded_spec(spec: ModelSpec, meta: dict) -> bool:
    """Whether a snapshot's games are this spec's: a shipped guesser's, or a seeded baseline's (the
    snapshot's `spec_kind`, e.g. the information-gain guesser, whose snapshot `python -m
    bench.learning.ship --baseline infogain` played)."""
    kind = meta.get("spec_kind")
    return is_shipped_spec(spec) if kind is None else spec.kind == kind


def read_snapshot(path: Path) -> list[Trajectory]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [Trajectory.from_dict(json.loads(line)) for line in lines if line.strip()]


@transaction.atomic
def import_evaluation(name: str, meta: dict, directory: Path = EVALUATION_DIR) -> bool:
    """One shipped guesser's stored evaluation as a finished evaluation job with its games (once:
    a job that carries the snapshot's digest already holds them). A re-shipped snapshot (a new
    digest) replaces the guesser's earlier imported one, games and all, so nothing counts twice."""
    from webapp.jobs.models import Job, JobStatus
    from webapp.play.models import Game
    from webapp.play.records import trajectories_store

    imported = Job.objects.filter(
        kind="evaluation", config__guesser=name, result__snapshot__digest__isnull=False
    )
    if imported.filter(result__snapshot__digest=meta["digest"]).exists():
        return False
    Game.objects.filter(job__in=imported).delete()
    imported.delete()
    guesser = ModelSpec.objects.get(name=name)
    # a snapshot names its judge spec and word list (a guesser on a pretrained base); the tiny
    # guessers' are the KB judge and their pool's test split
    judge_name, list_name = meta.get("judge_spec", JUDGE), meta.get("word_list", POOL_LIST)
    judge = ModelSpec.objects.get(name=judge_name)
    word_list = WordList.objects.filter(name=list_name).order_by("-version").first()
    if word_list is None:
        raise WordList.DoesNotExist(f"word list {list_name} is not seeded")
    words = dict(word_list.entries.values_list("word__text", "word_id"))
    games = read_snapshot(directory / meta["file"])
    config = EvaluationConfig(
        guesser=name,
        judge=judge_name,
        word_list=list_name,
        split=meta.get("split", "test"),
        samples=meta["samples"],
        max_turns=meta["max_turns"],
        win_rule=meta["win_rule"],
        seed=meta["seed"],
        sampling=meta.get("sampling_name", "model"),
    )
    now = timezone.now()
    job = Job.objects.create(
        kind="evaluation",
        config=asdict(config),
        status=JobStatus.FINISHED,
        progress=1.0,
        progress_message="imported from the shipped snapshot at seed time",
        result={**meta["summary"], "snapshot": {k: v for k, v in meta.items() if k != "summary"}},
        started_at=now,
        finished_at=now,
    )
    seen: dict[str, int] = {}
    samples = []
    for game in games:
        samples.append(seen.get(game.secret, 0))
        seen[game.secret] = samples[-1] + 1
    trajectories_store(
        games,
        guesser=guesser,
        judge=judge,
        job=job,
        word_list=word_list,
        sample_indices=samples,
        words=words,
    )
    return True


def importable(name: str, meta: dict) -> bool:
    """Whether the judge spec and word list a snapshot names are seeded (a partial seed, e.g. a
    test's, skips the snapshot with a warning instead of failing)."""
    judge, word_list = meta.get("judge_spec", JUDGE), meta.get("word_list", POOL_LIST)
    if ModelSpec.objects.filter(name=judge).exists() and (
        WordList.objects.filter(name=word_list).exists()
    ):
        return True
    log.warning("shipped evaluation of %s skipped: %s or %s is not seeded", name, judge, word_list)
    return False


def seed_shipped_evaluations(directory: Path = EVALUATION_DIR) -> list[str]:
    """Import every shipped evaluation not imported yet (one whose games file is missing is
    skipped), then refresh the boards."""
    index = directory / "evaluation.json"
    if not index.is_file():
        return []
    imported = [
        name
        for name, meta in json.loads(index.read_text(encoding="utf-8"))["guessers"].items()
        if any(is_seeded_spec(spec, meta) for spec in ModelSpec.objects.filter(name=name))
        and (directory / meta["file"]).is_file()
        and importable(name, meta)
        and import_evaluation(name, meta, directory)
    ]
    if imported:
        from webapp.leaderboards.services import leaderboards_refresh

        leaderboards_refresh()
    return imported


def seed_shipped() -> dict[str, list[str]]:
    """The seed command's part for the shipped guessers: pool list, specs, evaluations."""
    pool = seed_pool_word_list()
    return {
        "word_lists": [pool] if pool else [],
        "guessers": seed_guesser_specs(),
        "evaluations": seed_shipped_evaluations(),
    }
