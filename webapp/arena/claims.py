"""A guest who logs in or signs up keeps their battles, as play keeps their games
(webapp.play.claims): the battles of the session's guest games become the account's, so the
people page and an exclusion of the account cover them."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in
from django.db.models import Q

from webapp.arena.models import Battle
from webapp.play.visitors import session_game_ids


def guest_battles_claim(*, user, game_ids: list[int]) -> int:
    """The guest battles whose games are among `game_ids` and unclaimed or `user`'s (play's
    receiver may run first) become `user`'s. Returns how many."""
    if not game_ids:
        return 0
    mine = Q(game_a__player__isnull=True) | Q(game_a__player=user)
    battles = Battle.objects.filter(mine, player__isnull=True, game_a_id__in=game_ids)
    return battles.update(player=user, guest_key="")


def claim_on_login(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        guest_battles_claim(user=user, game_ids=session_game_ids(request))


def connect() -> None:
    user_logged_in.connect(claim_on_login, dispatch_uid="arena.claim_guest_battles")
