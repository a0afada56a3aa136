"""Filters and tags of the jobs pages: readable results and timings (webapp.jobs.formatting)."""

from django import template
from django.utils import timezone

from webapp.jobs import formatting

register = template.Library()


@register.filter
def rate(value, interval=None) -> str:
    """0.924, [0.901, 0.945] → "92.4% [90.1, 94.5]"; "—" when missing."""
    if not _is_number(value):
        return formatting.scalar_text("", value)  # missing ("" from the template) or not a rate
    return formatting.rate_text(value, interval)


@register.filter
def number(value) -> str:
    """3464 → "3,464"; 13.642 → "13.64"; None → "—"."""
    return formatting.number_text(value) if _is_number(value) else formatting.scalar_text("", value)


@register.filter
def plain(value, key: str = "") -> str:
    """Any stored value as text: lists comma-separated, dicts as "key: value; …", never a repr."""
    return formatting.scalar_text(key, value)


@register.simple_tag
def job_timing(job) -> dict:
    """{"duration", "left", "waited"} of a job at this moment."""
    return formatting.job_timing(job, timezone.now())


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
