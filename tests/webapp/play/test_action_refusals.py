"""Play's actions refuse a game the visitor may not act on without ever showing it (issue 34).

Every POST under /play/N/ and GET /play/N/suggestions/, for every kind of visitor (a guest with a
CSRF cookie, another signed-in player, the game's owner) and every kind of game (one hidden while
its secret is labelled, one of a running Arena battle, someone's ordinary game), with and without
htmx: a game hidden from the visitor answers 404, one they may see but not play answers 403 with a
short message, and neither answer carries the game's secret, questions or verdicts. The owner's
actions answer as before (the refreshed panel under htmx, else a redirect to the game).
"""

from __future__ import annotations

import pytest
from django.test import Client

from tests.webapp.arena.support import STRONG, WEAK, seed_arena
from tests.webapp.labelling.support import run_disagreements, store_games
from tests.webapp.play.support import seed_play_catalog, truthful_verdict, visitor_of
from webapp.arena.models import Battle
from webapp.labelling.models import DisagreementItem
from webapp.play import services
from webapp.play.models import Game

pytestmark = pytest.mark.django_db

ACTIONS = ("abandon", "undo", "first-question", "ask", "answer", "confirm")
VISITORS = ("guest", "other player", "owner")
KINDS = ("blinded", "battle", "other's")
REFUSAL = "This game belongs to someone else"


def _data(action: str, game: Game) -> dict:
    """A well-formed body for `action` (its expected_index the game's next question)."""
    return {
        "ask": {"question": "Is it alive?", "expected_index": game.n_turns},
        "answer": {"verdict": "yes", "expected_index": game.n_turns},
        "confirm": {"secret": "dog"},
    }.get(action, {})


def _blinded(owner) -> Game:
    """A finished game whose secret is still being labelled: hidden from all but its player (and
    researchers), its panel would say "The word was seal" and every verdict."""
    store_games()
    run_disagreements(controls=0.0)
    seal = Game.objects.get(secret="seal")
    assert DisagreementItem.objects.filter(secret="seal", gold="").exists()
    Game.objects.filter(pk=seal.pk).update(player=owner)
    return Game.objects.get(pk=seal.pk)


def _battle(owner) -> Game:
    """A game of the owner's running Arena battle: hidden from everyone, the owner included (its
    panel would name the battle's anonymous guesser)."""
    seed_arena()
    client = Client()
    client.force_login(owner)
    assert client.post("/api/arena/battles/", {}, "application/json").status_code == 201
    return Battle.objects.get().game_a


def _others(owner, monkeypatch) -> Game:
    """The owner's running game, the model asking about a drawn word: two questions answered, one
    pending, an answer to undo."""
    seed_play_catalog()
    monkeypatch.setattr(services, "draw_secret", lambda words, judge: "dog")
    visitor = visitor_of(owner)
    game = services.game_start(
        visitor=visitor, role="answerer", guesser="infogain", word_list="dbrl/paper_test"
    )
    for _ in range(2):
        game.refresh_from_db()
        question = game.state["pending"]["question"]
        services.answer_submit(
            game_id=game.pk,
            visitor=visitor,
            verdict=truthful_verdict("dog", question),
            expected_index=game.n_turns,
        )
    game.refresh_from_db()
    assert game.status == "playing" and game.n_turns == 2 and game.state.get("pending")
    return game


@pytest.fixture
def scene(make_user, monkeypatch):
    """(kind, visitor) -> the game, the visitor's client (a strict CSRF client holding a token)
    and the CSRF header to post with."""

    def build(kind: str, visitor: str):
        owner = make_user("player")
        game = {
            "blinded": lambda: _blinded(owner),
            "battle": lambda: _battle(owner),
            "other's": lambda: _others(owner, monkeypatch),
        }[kind]()
        client = Client(enforce_csrf_checks=True)
        if visitor == "owner":
            client.force_login(owner)
        elif visitor == "other player":
            client.force_login(make_user("player"))
        client.get("/play/")  # any page with a form sets the CSRF cookie
        token = client.cookies["csrftoken"].value
        return game, client, {"HTTP_X_CSRFTOKEN": token}

    return build


def _secrets_of(game: Game) -> list[str]:
    """What of `game` must not reach someone it is refused to."""
    said = [t.question for t in game.turns.all()]
    pending = (game.state or {}).get("pending") or {}
    return [
        *([game.secret] if game.secret else []),
        *said,
        *([pending["question"]] if pending.get("question") else []),
        STRONG,
        WEAK,  # a battle's anonymous guessers
        game.guesser.name if game.guesser_id else "",
        "verdict-",  # the history's verdict badges
        "The word was",
        'id="game-panel"',
        "Questions so far",
    ]


def _expected(kind: str, visitor: str) -> int | None:
    """The refusal's status, or None where the owner acts."""
    if kind == "battle":
        return 404
    if visitor == "owner":
        return None
    return 404 if kind == "blinded" else 403


def _leaked(body: str, game: Game) -> list[str]:
    return [s for s in _secrets_of(game) if s and s in body]


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("visitor", VISITORS)
@pytest.mark.parametrize("action", ACTIONS)
def test_a_refused_action_never_shows_the_game(scene, action, visitor, kind, htmx):
    game, client, csrf = scene(kind, visitor)
    before = (game.n_turns, game.status, game.turns.count(), game.secret)
    headers = {**csrf, **({"HTTP_HX_REQUEST": "true"} if htmx else {})}
    response = client.post(f"/play/{game.pk}/{action}/", _data(action, game), **headers)
    body = response.content.decode()
    expected = _expected(kind, visitor)
    if expected is None:  # the owner: the panel as before, or a redirect back to the game
        if htmx:
            assert response.status_code < 500 and response.status_code not in (403, 404), body
            assert 'id="game-panel"' in body
        else:
            assert response.status_code == 302 and response["Location"] == f"/play/{game.pk}/"
        return
    assert _leaked(body, game) == [], response.status_code
    assert response.status_code == expected, (response.status_code, body[:300])
    if expected == 403:
        assert REFUSAL in body  # a short message, not the CSRF failure page
    game.refresh_from_db()
    assert (game.n_turns, game.status, game.turns.count(), game.secret) == before


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("visitor", VISITORS)
def test_suggestions_of_a_hidden_game_answer_404(scene, visitor, kind):
    game, client, _ = scene(kind, visitor)
    response = client.get(f"/play/{game.pk}/suggestions/", {"question": "Is it a"})
    hidden = kind == "battle" or (kind == "blinded" and visitor != "owner")
    if hidden:
        assert _leaked(response.content.decode(), game) == []
    assert response.status_code == (404 if hidden else 200)


def test_the_owners_actions_still_play_the_game(scene):
    game, client, csrf = scene("other's", "owner")
    url = f"/play/{game.pk}/"
    pending = game.state["pending"]["question"]
    panel = client.post(
        f"{url}answer/",
        {"verdict": truthful_verdict("dog", pending), "expected_index": 2},
        HTTP_HX_REQUEST="true",
        **csrf,
    )
    assert panel.status_code == 200 and "Your word: <strong" in panel.content.decode()
    assert Game.objects.get(pk=game.pk).n_turns == 3
    assert client.post(f"{url}undo/", **csrf).status_code == 302
    assert Game.objects.get(pk=game.pk).n_turns == 2
    wrong = client.post(f"{url}ask/", _data("ask", game), HTTP_HX_REQUEST="true", **csrf)
    assert (
        wrong.status_code == 400
        and 'role="alert">In this game you answer' in wrong.content.decode()
    )
    assert client.post(f"{url}abandon/", HTTP_HX_REQUEST="true", **csrf).status_code == 200
    assert Game.objects.get(pk=game.pk).status != "playing"


def test_a_guest_plays_their_own_game_and_another_guest_is_refused(catalog):
    owner = Client()
    owner.post("/play/start/", {"role": "guesser"})
    game = Game.objects.get()
    ask = {"question": "Is it alive?", "expected_index": 0}
    assert owner.post(f"/play/{game.pk}/ask/", ask, HTTP_HX_REQUEST="true").status_code == 200
    question = game.turns.get().question
    stranger = Client()
    ask["expected_index"] = 1
    for htmx in ({"HTTP_HX_REQUEST": "true"}, {}):
        refused = stranger.post(f"/play/{game.pk}/ask/", ask, **htmx)
        assert refused.status_code == 403 and REFUSAL in refused.content.decode()
        assert question not in refused.content.decode()
    assert game.turns.count() == 1
