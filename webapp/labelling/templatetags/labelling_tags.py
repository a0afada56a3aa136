"""Formatting of estimates (value with a 95% interval) on the labelling pages."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def num(value, places: int = 3) -> str:
    return "—" if value is None else f"{float(value):.{int(places)}f}"


@register.filter
def pct(value, places: int = 1) -> str:
    return "—" if value is None else f"{100 * float(value):.{int(places)}f}"


@register.filter
def interval(estimate, as_percent: bool = False) -> str:
    """ "lo – hi" of an Estimate dict, or a dash when there is none."""
    if not estimate or estimate.get("lo") is None:
        return "—"
    fmt = pct if as_percent else num
    return f"{fmt(estimate['lo'])} – {fmt(estimate['hi'])}"
