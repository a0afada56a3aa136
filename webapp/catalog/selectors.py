from __future__ import annotations

from django.db.models import Count, Max, OuterRef, Q, Subquery

from webapp.catalog.models import ModelKind, ModelRole, ModelSpec, WordList
from webapp.core.exceptions import ApplicationError


class ModelSpecUnavailable(ApplicationError):
    """No active model spec of that name can take the role (or is of the kinds asked for)."""

    def __init__(self, name: str, what: str = ""):
        super().__init__(
            f"no active {what + ' ' if what else ''}model spec named {str(name)[:100]!r}"
        )
        self.name = name


def word_list_summaries():
    """The newest version of each word list with its size."""
    newest = (
        WordList.objects.filter(name=OuterRef("name")).order_by("-version").values("version")[:1]
    )
    return (
        WordList.objects.filter(version=Subquery(newest))
        .annotate(n_words=Count("entries"))
        .order_by("name")
    )


def word_list_latest(name: str) -> WordList | None:
    return WordList.objects.filter(name=name).order_by("-version").first()


def model_spec_active(name: str, role: str = "", *, kinds=None, what: str = "") -> ModelSpec:
    """The active model spec called `name` that can take `role` ("guesser", "judge", empty: any)
    and, with `kinds`, is of one of them; else ModelSpecUnavailable, worded with `what` (default:
    the role)."""
    spec = ModelSpec.objects.filter(name=name, is_active=True).first()
    if spec is None or not spec.plays(role) or (kinds is not None and spec.kind not in kinds):
        raise ModelSpecUnavailable(name, what or role)
    return spec


def model_specs_heavy(names) -> bool:
    """Whether any model spec of these names loads a neural network (its job needs a GPU)."""
    kinds = ModelSpec.objects.filter(name__in=[n for n in names if n]).values_list(
        "kind", flat=True
    )
    return any(kind in ModelKind.HEAVY for kind in kinds)


def model_specs_for(role: str):
    """The active model specs that can take `role` ("guesser", "judge"; any other: every one)."""
    qs = ModelSpec.objects.filter(is_active=True)
    return qs.filter(role__in=ModelRole.able_to(role)) if ModelRole.able_to(role) else qs


def model_specs_to_play(role: str):
    """The model specs people may play against in `role` (play's menus, the arena draw):
    model_specs_for(role) without training bases (options.opponent false, e.g. the untrained
    tiny-llama) and without unpublished ones (a trained checkpoint until a researcher publishes
    it)."""
    return model_specs_for(role).filter(
        ~Q(options__has_key="opponent") | Q(options__opponent=True), published=True
    )


def judge_sureness(p_yes, verdict) -> str:
    """How sure a probabilistic judge (the learned judge) was of the answer it gave, as "87%": p_yes
    for yes, 1 − p_yes for no; empty for any other answer or a judge without probabilities."""
    try:
        p = float(p_yes)
    except (TypeError, ValueError):
        return ""
    sure = {"yes": p, "no": 1.0 - p}.get(str(verdict))
    return "" if sure is None else f"{round(100 * sure)}%"


def latest_versions() -> dict[str, int]:
    return dict(WordList.objects.values_list("name").annotate(v=Max("version")))


def word_list_versions(name: str):
    return (
        WordList.objects.filter(name=name).annotate(n_words=Count("entries")).order_by("-version")
    )


def word_list_rows(
    word_list: WordList, *, split: str | None = None, subset: str | None = None
) -> list[dict]:
    """Entries as plain rows (word order), optionally one split or one training subset."""
    entries = word_list.entries.select_related("word").order_by("word__text")
    if split is not None:
        entries = entries.filter(split=split)
    rows = [
        {
            "word": e.word.text,
            "split": e.split,
            "category": e.category,
            "difficulty": e.difficulty,
            "solve_rate": e.solve_rate,
            "mean_questions": e.mean_questions,
            "subsets": list((e.stats or {}).get("subsets") or []),
            "stats": e.stats or {},
        }
        for e in entries
    ]
    return [r for r in rows if subset in r["subsets"]] if subset else rows


def word_list_split_counts(word_list: WordList) -> dict[str, int]:
    return dict(word_list.entries.values_list("split").annotate(n=Count("id")).order_by("split"))


def word_list_subset_counts(rows: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        for name in row["subsets"]:
            counts[name] = counts.get(name, 0) + 1

    def natural(name: str) -> tuple:  # rl_band, curriculum_5, curriculum_10, ...
        head, _, tail = name.rpartition("_")
        return (head, int(tail)) if tail.isdigit() else (name, -1)

    return dict(sorted(counts.items(), key=lambda kv: natural(kv[0])))


def word_list_compare(*, old: WordList, new: WordList, min_change: float = 1e-9) -> dict:
    """What changed from `old` to `new`: words added and removed, words moved between splits, and
    difficulty changes (a value appearing or disappearing counts; deltas larger first)."""
    before = {r["word"]: r for r in word_list_rows(old)}
    after = {r["word"]: r for r in word_list_rows(new)}
    added = [after[w] for w in sorted(after.keys() - before.keys())]
    removed = [before[w] for w in sorted(before.keys() - after.keys())]
    moved, changed, moves = [], [], {}
    for word in sorted(before.keys() & after.keys()):
        a, b = before[word], after[word]
        if a["split"] != b["split"]:
            moved.append({"word": word, "from": a["split"], "to": b["split"]})
            key = f"{a['split'] or '-'} → {b['split'] or '-'}"
            moves[key] = moves.get(key, 0) + 1
        da, db = a["difficulty"], b["difficulty"]
        if (da is None) != (db is None) or (da is not None and abs(db - da) > min_change):
            changed.append(
                {
                    "word": word,
                    "from": da,
                    "to": db,
                    "delta": (db - da) if da is not None and db is not None else None,
                    "solve_rate_from": a["solve_rate"],
                    "solve_rate_to": b["solve_rate"],
                }
            )
    changed.sort(
        key=lambda c: (-(abs(c["delta"]) if c["delta"] is not None else float("inf")), c["word"])
    )
    return {
        "old": old,
        "new": new,
        "added": added,
        "removed": removed,
        "moved": moved,
        "difficulty_changed": changed,
        "split_moves": dict(sorted(moves.items())),
        "unchanged": len(before.keys() & after.keys())
        - len({m["word"] for m in moved} | {c["word"] for c in changed}),
        "counts": {
            "old": len(before),
            "new": len(after),
            "added": len(added),
            "removed": len(removed),
            "moved": len(moved),
            "difficulty_changed": len(changed),
        },
    }
