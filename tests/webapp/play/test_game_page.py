"""Issue 22 item 11: starting a game against a slow model answers at once and the page loads the
model's first question; the question waiting for an answer is shown once; the keys are named."""

from __future__ import annotations

import re
import time

import pytest
from django.utils.html import escape

from tests.webapp.play.support import SlowGuesser, slow_guessers
from webapp.play.models import Game

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
SLOW_SECONDS = 1.5


class BrokenGuesser(SlowGuesser):
    def ask(self, state):
        raise RuntimeError("out of memory")


@pytest.fixture
def slow_guesser(monkeypatch):
    return slow_guessers(monkeypatch, SLOW_SECONDS)


def start(client, **form) -> tuple[Game, float]:
    began = time.perf_counter()
    response = client.post("/play/start/", {"role": "answerer", **form})
    seconds = time.perf_counter() - began
    assert response.status_code == 302, response.content
    return Game.objects.get(
        pk=int(re.search(r"/play/(\d+)/", response["Location"]).group(1))
    ), seconds


def test_starting_against_a_slow_guesser_answers_at_once_and_the_page_loads_its_question(
    client, catalog, slow_guesser
):
    game, seconds = start(client, guesser="infogain")
    assert seconds < SLOW_SECONDS  # the model was not waited for
    assert game.n_turns == 0 and "pending" not in game.state
    began = time.perf_counter()
    page = client.get(f"/play/{game.pk}/").content.decode()
    assert time.perf_counter() - began < SLOW_SECONDS
    assert "The model is thinking of its first question…" in page
    assert f'hx-post="/play/{game.pk}/first-question/" hx-trigger="load"' in page
    assert 'id="pending-question"' not in page

    panel = client.post(f"/play/{game.pk}/first-question/", **HTMX)
    game.refresh_from_db()
    question = escape(game.state["pending"]["question"])
    html = panel.content.decode()
    assert panel.status_code == 200 and f'id="pending-question">{question}<' in html
    assert "thinking of its first question" not in html
    assert f'innerHTML:#announcer-next">infogain asks: “{question}”' in html

    again = client.post(f"/play/{game.pk}/first-question/", **HTMX)  # a repeated request: no-op
    game.refresh_from_db()
    assert again.status_code == 200 and game.state["pending"]["question"] == question
    assert game.turns.count() == 0


def test_without_javascript_the_first_question_is_one_button_away(client, catalog):
    game, _ = start(client)
    page = client.get(f"/play/{game.pk}/").content.decode()
    assert f'<noscript><form method="post" action="/play/{game.pk}/first-question/">' in page
    response = client.post(f"/play/{game.pk}/first-question/")
    assert response.status_code == 302 and response["Location"] == f"/play/{game.pk}/"
    assert 'id="pending-question"' in client.get(f"/play/{game.pk}/").content.decode()


def test_only_the_player_may_ask_for_the_first_question(client, catalog):
    game, _ = start(client)
    stranger = client.__class__()
    refused = stranger.post(f"/play/{game.pk}/first-question/", **HTMX)
    game.refresh_from_db()
    assert "pending" not in game.state and "belongs to someone else" in refused.content.decode()


def test_a_guesser_that_fails_shows_the_error_and_a_button_to_try_again(
    client, catalog, monkeypatch
):
    game, _ = start(client)
    slow_guessers(monkeypatch, 0, double=BrokenGuesser)
    html = client.post(f"/play/{game.pk}/first-question/", **HTMX).content.decode()
    assert "failed to ask its question" in html and 'id="ask-again"' in html
    assert "out of memory" not in html  # the error's text is logged, not shown
    assert 'hx-trigger="load"' not in html  # no endless retries
    monkeypatch.undo()  # the real guesser again
    html = client.post(f"/play/{game.pk}/first-question/", **HTMX).content.decode()
    assert 'id="pending-question"' in html


def test_the_waiting_question_is_shown_once_on_the_page(client, catalog):
    game, _ = start(client)
    client.post(f"/play/{game.pk}/first-question/", **HTMX)
    game.refresh_from_db()
    first = escape(game.state["pending"]["question"])
    page = client.get(f"/play/{game.pk}/").content.decode()
    assert page.count(first) == 1

    html = client.post(
        f"/play/{game.pk}/answer/", {"verdict": "no", "expected_index": 0}, **HTMX
    ).content.decode()
    game.refresh_from_db()
    second = escape(game.state["pending"]["question"])
    visible = re.sub(
        r'<div hx-swap-oob="innerHTML:#announcer-next">.*?</div>', "", html, flags=re.S
    )
    assert visible.count(second) == 1  # in the panel; the visible announcer says what was answered
    assert f"Question 1: “{first}” — You answered: No." in html
    assert client.get(f"/play/{game.pk}/").content.decode().count(second) == 1


def test_the_game_page_names_every_answer_key_and_says_they_work_anywhere(client, catalog):
    game, _ = start(client)
    html = client.post(f"/play/{game.pk}/first-question/", **HTMX).content.decode()
    for key, verdict in (("y", "yes"), ("n", "no"), ("d ?", "unknown"), ("i", "invalid")):
        assert re.search(rf'value="{verdict}" data-shortcut="{re.escape(key)}"', html), verdict
    page = client.get(f"/play/{game.pk}/").content.decode()
    assert "work anywhere on this page except while you type in a box" in page


def _swapped(page: str, status: int) -> bool:
    """Whether the game page's htmx (its htmx-config responseHandling) swaps in a panel answered
    with `status`: the first rule whose code pattern matches decides."""
    import json

    config = re.search(r"<meta name=\"htmx-config\" content='([^']+)'>", page).group(1)
    for rule in json.loads(config)["responseHandling"]:
        if re.fullmatch(rule["code"], str(status)):
            return rule["swap"]
    return False


def test_a_failing_guessers_panel_is_one_the_game_page_swaps_in(client, catalog, monkeypatch):
    """The panel with the guesser's error and "Ask again" must reach the page: htmx swaps no 5xx
    there, so the spinner would stay for good."""
    game, _ = start(client)
    page = client.get(f"/play/{game.pk}/").content.decode()
    slow_guessers(monkeypatch, 0, double=BrokenGuesser)
    response = client.post(f"/play/{game.pk}/first-question/", **HTMX)
    assert 'id="ask-again"' in response.content.decode()
    assert _swapped(page, response.status_code), response.status_code
    without_htmx = client.post(f"/play/{game.pk}/first-question/")
    assert without_htmx.status_code == 302  # the error as a message on the page
