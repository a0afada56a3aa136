"""Formatting for snapshot rows (plain JSON: numbers, ISO dates)."""

from __future__ import annotations

from django import template
from django.utils.dateparse import parse_datetime

register = template.Library()


@register.filter
def pct(value, digits: int = 1) -> str:
    """0.1234 -> "12.3" (no % sign); None -> "—"."""
    if value is None or value == "":
        return "—"
    return f"{float(value) * 100:.{int(digits)}f}"


@register.filter
def num(value, digits: int = 2) -> str:
    if value is None or value == "":
        return "—"
    return f"{float(value):.{int(digits)}f}"


@register.filter
def isodate(value):
    """An ISO date string from a snapshot as a datetime (for |date); None stays None."""
    return parse_datetime(value) if isinstance(value, str) else value
