from __future__ import annotations

from django.db.models import Count, Max, OuterRef, Subquery

from webapp.catalog.models import ModelSpec, WordList


def word_list_summaries():
    """The newest version of each word list with its size."""
    newest = WordList.objects.filter(name=OuterRef("name")).order_by("-version").values("version")[:1]
    return (
        WordList.objects.filter(version=Subquery(newest))
        .annotate(n_words=Count("entries"))
        .order_by("name")
    )


def word_list_latest(name: str) -> WordList | None:
    return WordList.objects.filter(name=name).order_by("-version").first()


def model_specs_for(role: str):
    qs = ModelSpec.objects.filter(is_active=True)
    if role == "guesser":
        return qs.filter(role__in=["guesser", "both"])
    if role == "judge":
        return qs.filter(role__in=["judge", "both"])
    return qs


def latest_versions() -> dict[str, int]:
    return dict(WordList.objects.values_list("name").annotate(v=Max("version")))
