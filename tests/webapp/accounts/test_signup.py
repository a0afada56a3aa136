"""Issue 22 item 11: sign-up is a form page of labelled fields with help and errors by field, and
a guest who signs up or logs in right after playing keeps the games played in that browser."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.webapp.play.support import clear_guest_limit, seed_play_catalog, start_from_page
from webapp.labelling.models import JudgeVote
from webapp.play.models import Game
from webapp.play.selectors import player_stats

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
PASSWORD = "correct-horse-battery"


@pytest.fixture
def catalog():
    seed_play_catalog()
    clear_guest_limit()
    yield
    clear_guest_limit()


def sign_up(client, username="ada", **extra):
    form = {"username": username, "password1": PASSWORD, "password2": PASSWORD, **extra}
    return client.post("/accounts/signup/", form)


def field(html: str, name: str) -> str:
    """The markup of one field's block on the form page."""
    match = re.search(rf'<div class="field[^"]*" id="field-{name}">(.*?)</div>', html, re.S)
    assert match, name
    return match.group(1)


def test_the_sign_up_page_labels_and_explains_each_field_and_links_to_log_in(client):
    html = client.get("/accounts/signup/?next=/play/").content.decode()
    for name, label, help_text in (
        ("username", "Username", "Shown on the leaderboards"),
        ("email", "Email (optional)", "Never shown to anyone"),
        ("password1", "Password", "At least 8 characters"),
        ("password2", "Password confirmation", "The same password again"),
    ):
        block = field(html, name)
        assert f'<label for="id_{name}">{label}</label>' in block and help_text in block
        assert f'aria-describedby="id_{name}_helptext"' in block
    assert 'href="/accounts/login/?next=/play/"' in html and "Already have an account?" in html
    assert 'name="next" value="/play/"' in html
    assert 'href="/accounts/signup/"' in client.get("/accounts/login/").content.decode()


def test_sign_up_errors_are_shown_at_their_fields_and_nothing_is_created(client, player):
    response = client.post(
        "/accounts/signup/",
        {"username": player.username, "password1": PASSWORD, "password2": PASSWORD + "x"},
    )
    html = response.content.decode()
    assert response.status_code == 200 and get_user_model().objects.count() == 1
    assert "already exists" in field(html, "username") and 'aria-invalid="true"' in field(
        html, "username"
    )
    assert "didn’t match" in field(html, "password2") and "errorlist" not in field(html, "email")


def test_an_unsafe_next_is_ignored(client):
    response = sign_up(client, next="https://evil.example/")
    assert response.status_code == 302 and response["Location"] == "/"


def play_as_guest(client) -> tuple[Game, Game]:
    """A guest answers a model's first question and gives up a game they ask in."""
    answered = start_from_page(client, role="answerer", max_turns=3)
    client.post(f"/play/{answered.pk}/answer/", {"verdict": "no", "expected_index": 0}, **HTMX)
    asked = start_from_page(client, role="guesser")
    ended = client.post(f"/play/{asked.pk}/abandon/", **HTMX).content.decode()
    here = f"/play/{asked.pk}/"
    assert (
        f'id="keep-games">You played as a guest: <a href="/accounts/signup/?next={here}">' in ended
    )
    return answered, asked


def test_a_guest_who_signs_up_right_after_playing_keeps_the_games(client, catalog):
    answered, asked = play_as_guest(client)
    elsewhere = start_from_page(Client(), role="guesser")  # another browser's guest game
    assert (
        "The 2 games you played as a guest in this browser"
        in client.get("/accounts/signup/").content.decode()
    )

    response = sign_up(client)
    ada = get_user_model().objects.get(username="ada")
    assert response.status_code == 302 and response["Location"] == "/players/me/"
    for game in (answered, asked):
        game.refresh_from_db()
        assert game.player == ada and game.guest_key == ""
    elsewhere.refresh_from_db()
    assert elsewhere.player is None
    turn = answered.turns.get()
    vote = JudgeVote.objects.get(turn=turn)
    assert turn.judged_by == ada and (vote.user, vote.judge_name) == (ada, "human:ada")
    stats = player_stats(user=ada)
    assert stats["as_guesser"]["abandoned"] == 1 and stats["playing"] == 1
    page = client.get("/players/ada/").content.decode()
    assert f'href="/games/{asked.pk}/"' in page
    assert "now in your history" in page
    assert 'id="keep-games"' not in client.get(f"/play/{asked.pk}/").content.decode()
    # the account continues the game it took over
    answered.refresh_from_db()
    html = client.post(
        f"/play/{answered.pk}/answer/", {"verdict": "no", "expected_index": 1}, **HTMX
    ).content.decode()
    assert answered.turns.count() == 2, html


def test_a_guest_who_logs_in_right_after_playing_keeps_the_games(client, catalog, player):
    answered, asked = play_as_guest(client)
    assert "2 games you played as a guest" in client.get("/accounts/login/").content.decode()
    response = client.post(
        "/accounts/login/", {"username": player.username, "password": "a-long-test-password"}
    )
    assert response.status_code == 302, response.content
    assert set(Game.objects.filter(player=player).values_list("pk", flat=True)) == {
        answered.pk,
        asked.pk,
    }


def test_the_username_me_is_refused_its_player_page_would_be_the_viewers_own(client):
    """/players/me/ is the visitor's own page: an account named "me" could never be shown."""
    response = sign_up(client, username="me")
    assert response.status_code == 200
    assert "is reserved" in field(response.content.decode(), "username")
    assert not get_user_model().objects.filter(username="me").exists()


def test_a_double_submitted_sign_up_is_told_the_name_is_taken_not_a_500(client, monkeypatch):
    """A double click posts the form twice: both pass the form's uniqueness check before either
    saves (hashing the password takes a while), so the second one's insert hits the unique
    username. That request gets the form back with the error at the field."""
    from webapp.accounts.forms import SignUpForm

    checked = SignUpForm.is_valid

    def is_valid_then_the_other_request_saves(self):
        valid = checked(self)
        get_user_model().objects.create_user(username="ada", password=PASSWORD)
        return valid

    monkeypatch.setattr(SignUpForm, "is_valid", is_valid_then_the_other_request_saves)
    client.raise_request_exception = False
    response = sign_up(client)
    assert response.status_code == 200
    assert "already exists" in field(response.content.decode(), "username")
    assert get_user_model().objects.filter(username="ada").count() == 1
