"""How sure a probabilistic judge (the learned judge) was of an answer, for every page that shows
one."""

from django import template

from webapp.catalog.selectors import judge_sureness

register = template.Library()


@register.filter
def sure(p_yes, verdict) -> str:
    """`{{ turn.extra.p_yes|sure:turn.verdict }}` → "87%" (empty for a judge without
    probabilities)."""
    return judge_sureness(p_yes, verdict)
