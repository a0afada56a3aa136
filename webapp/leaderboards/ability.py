"""The ability board (``ability``): one Rasch fit over people (their strict-rule games) and
guesser models (model-vs-model games that count on the models boards) with words as items, so
people and models are ranked on one scale. A model's win counts only if its winning question also
wins under the strict rule, so everyone is on one rule; only standard 20-question games count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from games import rules
from games.rating import rasch_fit, theta_interval
from games.types import GameConfig
from webapp.catalog.models import ModelSpec
from webapp.leaderboards.models_board import FINISHED, model_games, not_won_under, rounded
from webapp.leaderboards.people import PEOPLE_RULE, people_games
from webapp.play.models import GameOutcome

ABILITY_PRELIMINARY_GAMES = 20  # a row with fewer games is marked preliminary
ABILITY_MAX_TURNS = GameConfig().max_turns  # the ability fit uses standard 20-question games only
ABILITY_RULE = PEOPLE_RULE  # everyone on the rule people play under


def _ability_turns_q() -> Q:
    # ABILITY_MAX_TURNS is the default, so games whose config omits max_turns belong too
    return Q(config__max_turns=ABILITY_MAX_TURNS) | Q(config__max_turns__isnull=True)


def ability_board(finishing_jobs: Iterable[int] = ()) -> tuple[list[dict], dict]:
    turns = _ability_turns_q()
    humans = (
        people_games()
        .filter(turns, outcome__in=FINISHED, player__isnull=False)
        .order_by("pk")
        .values_list("player_id", "secret", "outcome")
    )
    models = model_games(finishing_jobs).filter(turns)
    lost_under_rule = not_won_under(models, ABILITY_RULE)
    responses = [
        (("human", pid), rules.clean_word(secret), outcome == GameOutcome.WON)
        for pid, secret, outcome in humans.iterator()
    ]
    responses += [
        (
            ("model", gid),
            rules.clean_word(secret),
            outcome == GameOutcome.WON and pk not in lost_under_rule,
        )
        for pk, gid, secret, outcome in models.order_by("pk")
        .values_list("pk", "guesser_id", "secret", "outcome")
        .iterator()
    ]
    meta: dict[str, Any] = {
        "max_turns": ABILITY_MAX_TURNS,
        "responses": len(responses),
        "preliminary_games": ABILITY_PRELIMINARY_GAMES,
        "win_rule": ABILITY_RULE,
    }
    if not responses:
        return [], {**meta, "players": 0, "words": 0}
    fit = rasch_fit(responses)
    from django.contrib.auth import get_user_model

    user_ids = [pid for kind, pid in fit.players if kind == "human"]
    model_ids = [pid for kind, pid in fit.players if kind == "model"]
    usernames = dict(get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "username"))
    model_names = dict(ModelSpec.objects.filter(pk__in=model_ids).values_list("pk", "name"))
    rows = []
    for i, (kind, pid) in enumerate(fit.players):
        theta, se = float(fit.theta[i]), float(fit.theta_se[i])
        lo, hi = theta_interval(theta, se)
        name = (
            usernames.get(pid, f"user {pid}")
            if kind == "human"
            else model_names.get(pid, f"model {pid}")
        )
        games = int(fit.player_n[i])
        rows.append(
            {
                "kind": kind,
                "id": pid,
                "name": name,
                "theta": rounded(theta),
                "theta_lo": rounded(lo),
                "theta_hi": rounded(hi),
                "theta_se": rounded(se),
                "p_average_word": rounded(1 / (1 + math.exp(-theta))),
                "games": games,
                "wins": int(fit.player_wins[i]),
                "preliminary": games < ABILITY_PRELIMINARY_GAMES,
            }
        )
    rows.sort(key=lambda r: (-r["theta"], r["name"], r["kind"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    meta.update(
        players=len(rows),
        humans=len(user_ids),
        models=len(model_ids),
        words=len(fit.items),
        ridge=fit.ridge,
        converged=fit.converged,
        iterations=fit.iterations,
    )
    return rows, meta
