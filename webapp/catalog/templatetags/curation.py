"""The curation funnel of a job: from its word list's provenance once stored, else from the
funnel.json the runner rewrites after every stage (so the run page shows it while running)."""

from __future__ import annotations

import json

from django import template

from webapp.catalog.models import WordList
from webapp.jobs.reporter import job_output_path

register = template.Library()


@register.simple_tag
def curation_funnel(job) -> list[dict]:
    if not job:
        return []
    ref = (job.result or {}).get("word_list") or {}
    provenance = (
        WordList.objects.filter(pk=ref.get("id")).values_list("provenance", flat=True).first()
        if ref
        else None
    )
    if provenance and provenance.get("funnel"):
        return provenance["funnel"]
    path = job_output_path(job.pk) / "funnel.json"
    try:
        return json.loads(path.read_text())["stages"]
    except (OSError, ValueError, KeyError):
        return []


@register.filter
def dropped_total(stage: dict) -> int:
    return sum((stage.get("dropped") or {}).values())
