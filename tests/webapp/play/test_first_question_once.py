"""The model's first question is asked once however many requests arrive for it: while one
request asks the model, the others wait for its question instead of asking again (each ask
would cost a model call that the guest limit does not count)."""

from __future__ import annotations

import threading
import time

import pytest
from django.core.cache import cache
from django.db import connection

from tests.webapp.play.support import seed_play_catalog, slow_guessers, visitor_of
from webapp.play import services
from webapp.play.first_question import awaits_first_question, game_first_question
from webapp.play.models import Game

SLOW_SECONDS = 1.0
PAUSE = "webapp.play.first_question._pause"  # the wait between a waiting request's looks


@pytest.fixture
def counted_asks(monkeypatch):
    """Every question of the game's guesser takes SLOW_SECONDS and is counted."""
    return slow_guessers(monkeypatch, SLOW_SECONDS)


def started(player) -> Game:
    seed_play_catalog()
    return services.game_start(
        visitor=visitor_of(player), role="answerer", guesser="infogain", ask_first=False
    )


@pytest.mark.django_db(transaction=True)
def test_requests_arriving_together_ask_the_model_once_and_all_get_its_question(
    player, counted_asks
):
    game = started(player)
    got: list[object] = []

    def request() -> None:
        try:
            got.append(game_first_question(game_id=game.pk, visitor=visitor_of(player)))
        except Exception as err:  # noqa: BLE001 - reported by the assertion below
            got.append(err)
        finally:
            connection.close()

    threads = [threading.Thread(target=request) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(counted_asks) == 1  # before: one model call per request
    game.refresh_from_db()
    question = game.state["pending"]["question"]
    assert [g.state["pending"]["question"] for g in got] == [question] * 4, got


@pytest.mark.django_db
def test_a_request_waits_a_bounded_time_for_a_question_asked_elsewhere(
    player, counted_asks, monkeypatch
):
    game = started(player)
    key = f"singleflight:play:first-question:{game.pk}"
    assert cache.add(key, 1, timeout=60)  # another request is asking the model
    try:
        began = time.monotonic()
        waited = game_first_question(game_id=game.pk, visitor=visitor_of(player), wait_seconds=0.5)
        assert 0.5 <= time.monotonic() - began < 3
        assert awaits_first_question(waited) and counted_asks == []

        def stored_elsewhere(seconds):  # the other request stores its question meanwhile
            Game.objects.filter(pk=game.pk).update(state={"pending": {"question": "Is it big?"}})

        monkeypatch.setattr(PAUSE, stored_elsewhere)
        got = game_first_question(game_id=game.pk, visitor=visitor_of(player))
        assert got.state["pending"]["question"] == "Is it big?" and counted_asks == []
    finally:
        cache.delete(key)
    asked = game_first_question(
        game_id=Game.objects.create(
            mode=game.mode, guesser=game.guesser, player=player, config=game.config, seed=1
        ).pk,
        visitor=visitor_of(player),
    )
    assert asked.state["pending"]["question"] and len(counted_asks) == 1  # no one else: it asks


@pytest.mark.django_db
def test_a_waiting_request_stops_waiting_when_the_asking_one_fails(
    player, counted_asks, monkeypatch
):
    """The request asking the model failed (its lock let go, no question stored): the others
    answer at once, for the page to ask again, instead of waiting out their time."""
    game = started(player)
    key = f"singleflight:play:first-question:{game.pk}"
    assert cache.add(key, 1, timeout=60)  # another request is asking the model
    monkeypatch.setattr(PAUSE, lambda seconds: cache.delete(key))  # ... and fails
    try:
        began = time.monotonic()
        waited = game_first_question(game_id=game.pk, visitor=visitor_of(player), wait_seconds=5)
        assert time.monotonic() - began < 2  # before: the whole 5 s
        assert awaits_first_question(waited) and counted_asks == []
    finally:
        cache.delete(key)
