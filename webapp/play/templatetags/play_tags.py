from django import template

from webapp.play import selectors
from webapp.play.question_checks import ANSWER_LABELS

register = template.Library()


@register.filter
def verdict_label(verdict: str) -> str:
    """yes -> Yes, unknown -> Don't know, finished -> That's the word, ..."""
    return ANSWER_LABELS.get(verdict, verdict)


@register.filter
def outcome_shown(game) -> dict:
    """A game's outcome from the person's side (webapp.play.selectors.outcome_shown)."""
    return selectors.outcome_shown(game)


@register.filter
def percent(probability) -> str:
    try:
        value = float(probability) * 100
    except (TypeError, ValueError):
        return ""
    return f"{value:.1f}%" if value >= 0.1 else "<0.1%"


@register.filter
def form_hint(form: str) -> str:
    """A judge's question form with its placeholder shown as an ellipsis: "Is it a kind of …?"."""
    return form.replace("{x}", "…")
