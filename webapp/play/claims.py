"""A guest who signs up or logs in keeps the games they played as a guest in that browser: the
games in the session become the account's (its history, statistics and leaderboard rows)."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.signals import user_logged_in
from django.db import transaction

from webapp.labelling.models import JudgeVote
from webapp.play.models import Game, Turn
from webapp.play.visitors import session_game_ids


@transaction.atomic
def guest_games_claim(*, user, game_ids: Iterable[int]) -> int:
    """Make the guest games among `game_ids` (no player yet) `user`'s, with the answers the guest
    gave in them; other people's games are left alone. Returns how many games were claimed."""
    games = Game.objects.filter(pk__in=list(game_ids), player__isnull=True)
    claimed = list(games.values_list("pk", flat=True))
    if not claimed:
        return 0
    Turn.objects.filter(game_id__in=claimed, extra__judge="human", judged_by__isnull=True).update(
        judged_by=user
    )
    JudgeVote.objects.filter(turn__game_id__in=claimed, judge_name="human:guest").update(
        user=user, judge_name=f"human:{user.get_username()}"[:100]
    )
    return Game.objects.filter(pk__in=claimed).update(player=user, guest_key="")


def claimable_games(request) -> int:
    """How many guest games this browser's session holds that an account would take over."""
    game_ids = session_game_ids(request)
    return Game.objects.filter(pk__in=game_ids, player__isnull=True).count() if game_ids else 0


def claim_on_login(sender, request, user, **kwargs) -> None:
    """`user_logged_in` receiver: the session's guest games become the account's."""
    if request is None or not hasattr(request, "session"):
        return
    game_ids = session_game_ids(request)
    if game_ids:
        guest_games_claim(user=user, game_ids=game_ids)


def connect() -> None:
    user_logged_in.connect(claim_on_login, dispatch_uid="play.claim_guest_games")
