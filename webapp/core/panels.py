"""Pages built around one htmx panel (the game, the arena battle): a form's action is answered
with the refreshed panel, or, posted without htmx, with a redirect back to the page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from webapp.core.exceptions import ApplicationError


def panel_action(
    request, form, act: Callable[[Any, dict], Any], visitor, invalid: Callable[[Any], str]
) -> tuple[str | None, int]:
    """Validate `form`, then run `act(visitor, form.cleaned_data)`: (None, 200), or the refusal's
    (message, status). An invalid form gives (invalid(form), 200 under htmx, else 400): the page's
    htmx swaps only 2xx, and the panel saying what to mend is the answer (nothing was stored)."""
    if not form.is_valid():
        return invalid(form), 200 if request.htmx else 400
    try:
        act(visitor, form.cleaned_data)
    except ApplicationError as err:
        return err.message, err.status
    return None, 200


def redirect_without_htmx(
    request, error: str | None, to: str, **kwargs: Any
) -> HttpResponse | None:
    """A form posted without htmx: its error as a message, and a redirect back to the page `to`;
    None under htmx, where the caller answers with the refreshed panel."""
    if request.htmx:
        return None
    if error:
        messages.error(request, error)
    return redirect(to, **kwargs)


def panel_status(status: int) -> int:
    """The status a refreshed panel is answered with under htmx: a model's failure (5xx) as 200,
    since the panel pages' htmx swaps no 5xx and the panel saying what failed must reach the
    page."""
    return 200 if status >= 500 else status
