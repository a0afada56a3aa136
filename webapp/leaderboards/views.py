"""Leaderboard pages: read the stored snapshots; researchers may queue a recompute."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.roles import RESEARCHER, require_role
from webapp.leaderboards import services
from webapp.leaderboards.ability import ABILITY_PRELIMINARY_GAMES
from webapp.leaderboards.models_board import PRELIMINARY_GAMES
from webapp.leaderboards.selectors import (
    leaderboard_latest,
    leaderboard_model_keys,
    people_list_rows,
)

CHART_ROWS = 40  # the ability chart shows the top rows; the table lists everyone


def _models_context(request) -> dict:
    keys = leaderboard_model_keys()
    wanted = request.GET.get("key") or None
    snapshot = leaderboard_latest(services.MODELS, wanted) if keys else None
    missing = wanted is not None and snapshot is None
    if missing:
        snapshot = leaderboard_latest(services.MODELS)
    return {
        "model_keys": keys,
        "models": snapshot,
        "models_key_missing": missing,
        "preliminary_games": PRELIMINARY_GAMES,
    }


def _people_context(request) -> dict:
    """The People board of one word list (`?people=<key>`, default the most played list)."""
    humans = leaderboard_latest(services.HUMANS)
    wanted = request.GET.get("people") or None
    key, rows = people_list_rows(humans, wanted)
    return {
        "humans": humans,
        "people_lists": humans.meta.get("word_lists", []) if humans else [],
        "people_key": key,
        "people_key_missing": wanted is not None and wanted != key,
        "people_rows": rows,
    }


@require_GET
def index(request):
    context = _models_context(request)
    board = request.GET.get("board")
    if request.htmx and board == services.MODELS:
        return render(request, "leaderboards/partials/models.html", context)
    context.update(_people_context(request))
    if request.htmx and board == services.HUMANS:
        return render(request, "leaderboards/partials/humans.html", context)
    ability = leaderboard_latest(services.ABILITY)
    chart = [
        {
            "name": r["name"],
            "kind": r["kind"],
            "theta": r["theta"],
            "lo": r["theta_lo"],
            "hi": r["theta_hi"],
            "games": r["games"],
        }
        for r in (ability.rows[:CHART_ROWS] if ability else [])
    ]
    snapshots = [s for s in (context["models"], ability, context["humans"]) if s]
    context.update(
        ability=ability,
        ability_chart=chart,
        chart_rows=CHART_ROWS,
        chart_height=80 + 26 * len(chart),
        ability_preliminary_games=ABILITY_PRELIMINARY_GAMES,
        last_checked=max(
            (s.meta.get("checked_at") or s.computed_at.isoformat() for s in snapshots), default=None
        ),
    )
    return render(request, "leaderboards/index.html", context)


@require_POST
def recompute(request):
    require_role(request.user, RESEARCHER)
    if services.leaderboards_refresh_queue():
        messages.success(
            request,
            "Recompute queued: the boards update once a worker has run it (usually seconds).",
        )
    else:
        messages.info(
            request, "A recompute is already queued: the boards update once a worker has run it."
        )
    return redirect("leaderboards:index")
