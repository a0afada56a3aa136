"""A model's first question, asked once. A game the model asks in may start without it
(``game_start(ask_first=False)``: the page shows progress instead of waiting for a slow model) and
the page then asks for it here; one request at a time asks the model, one arriving meanwhile waits
for that question instead of asking again.
"""

from __future__ import annotations

import time

from django.db import transaction

from webapp.core.singleflight import in_flight, single_flight
from webapp.play.models import Game, GameMode, GameStatus
from webapp.play.moves import apply_plan, guesser_plan
from webapp.play.services import locked_game, visible_game
from webapp.play.visitors import Visitor

FIRST_QUESTION_HOLD = 90  # seconds one request may ask the first question (beyond the web
# server's 60 s request timeout, so a live request keeps it and a killed one frees it soon)
FIRST_QUESTION_WAIT = 30.0  # seconds another request waits for it
FIRST_QUESTION_POLL = 0.25


def awaits_first_question(game: Game) -> bool:
    """A game a model asks in that was started without its first question."""
    return (
        game.mode == GameMode.HUMAN_JUDGE
        and game.status == GameStatus.PLAYING
        and game.n_turns == 0
        and not (game.state or {}).get("pending")
    )


def game_first_question(
    *, game_id: int, visitor: Visitor, wait_seconds: float = FIRST_QUESTION_WAIT
) -> Game:
    """The model guesser's first question of a game started with `ask_first=False` (nothing to
    do once it has one, so a repeated request is harmless). One request at a time asks the model:
    a request arriving meanwhile waits up to `wait_seconds` for that question instead of asking
    again (the page then asks once more if it is still not there)."""
    game = visible_game(game_id, visitor)
    if not awaits_first_question(game):
        return game
    flight = f"play:first-question:{game.pk}"
    with single_flight(flight, FIRST_QUESTION_HOLD) as mine:
        if not mine:
            return _first_question_awaited(game_id, visitor, flight, wait_seconds)
        plan = guesser_plan(game, [])  # the guesser: no lock held
        with transaction.atomic():
            game = locked_game(game_id, visitor)
            if awaits_first_question(game):
                apply_plan(game, plan)
                game.save()
    return game


def _first_question_awaited(
    game_id: int, visitor: Visitor, flight: str, wait_seconds: float
) -> Game:
    """The game once it has its first question, the request asking for it is done without one
    (it failed: the page asks again) or `wait_seconds` have passed."""
    deadline = time.monotonic() + wait_seconds
    while True:
        asking = in_flight(flight)  # read before the game: a question stored meanwhile is seen
        game = visible_game(game_id, visitor)
        if not awaits_first_question(game) or not asking or time.monotonic() >= deadline:
            return game
        _pause(FIRST_QUESTION_POLL)


def _pause(seconds: float) -> None:
    time.sleep(seconds)
