"""Who is playing: a signed-in user, or a guest known by a hashed IP and the games in their
session."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.crypto import salted_hmac

# a guest's address as the guest limit and the login throttle see it: behind TRUSTED_PROXIES
# proxies the address the nearest trusted one saw, not the proxy's (one identity per client)
from webapp.accounts.services import client_ip

SESSION_GAMES_KEY = "play_games"
MAX_SESSION_GAMES = 50  # a guest can continue their most recent games


@dataclass(frozen=True)
class Visitor:
    user: object | None = None  # a signed-in user, else None
    guest_key: str = ""  # salted hash of a guest's IP
    session_games: frozenset[int] = field(default_factory=frozenset)

    @property
    def name(self) -> str:
        return self.user.get_username() if self.user is not None else "guest"

    def can_continue(self, game) -> bool:
        """A signed-in player's game only by that player; a guest game only by the session that made
        it."""
        if game.player_id is not None:
            return self.user is not None and self.user.pk == game.player_id
        return game.pk in self.session_games


def guest_key_for(ip: str) -> str:
    return salted_hmac("webapp.play.guest", ip or "unknown", algorithm="sha256").hexdigest()


def session_game_ids(request) -> list[int]:
    """The games this browser's session started (a guest may continue them; an account claims
    them at sign-in)."""
    return [int(i) for i in request.session.get(SESSION_GAMES_KEY, [])]


def visitor_from_request(request) -> Visitor:
    user = request.user if request.user.is_authenticated else None
    games = frozenset(session_game_ids(request))
    return Visitor(
        user=user, guest_key="" if user else guest_key_for(client_ip(request)), session_games=games
    )


def remember_game(request, game) -> None:
    """Put a new game in the session so the browser that started it can continue it."""
    games = [i for i in request.session.get(SESSION_GAMES_KEY, []) if i != game.pk]
    request.session[SESSION_GAMES_KEY] = (games + [game.pk])[-MAX_SESSION_GAMES:]
