"""Issue 22: people play under the strict rule, "That's my word!" only for a guess, with undo."""

from __future__ import annotations

import pytest

from games.types import GameConfig
from tests.webapp.play.support import start_from_page as start_game
from webapp.labelling.models import JudgeVote
from webapp.play.models import Game

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
# fmt: off
SIXTY = [
    "dog", "cat", "cow", "pig", "hen", "owl", "bee", "ant", "fox", "bear", "lion", "wolf", "deer",
    "duck", "goat", "frog", "fish", "crab", "seal", "swan", "car", "bus", "van", "boat", "ship",
    "kite", "drum", "bell", "lamp", "sofa", "bed", "desk", "door", "key", "cup", "fork", "pan",
    "pot", "rope", "ring", "coin", "book", "pen", "map", "hat", "coat", "shoe", "sock", "bag",
    "box", "egg", "cake", "pie", "rice", "corn", "pear", "plum", "lime", "tree", "city",
]
# fmt: on


def ask(client, game, question, index):
    return client.post(
        f"/play/{game.pk}/ask/", {"question": question, "expected_index": index}, **HTMX
    )


def pose(game, question):
    """Make the model's pending question this one (the guesser's own choice varies)."""
    game.refresh_from_db()
    Game.objects.filter(pk=game.pk).update(
        state={**game.state, "pending": {**game.state["pending"], "question": question}}
    )


def answer(client, game, verdict):
    game.refresh_from_db()
    return client.post(
        f"/play/{game.pk}/answer/", {"verdict": verdict, "expected_index": game.n_turns}, **HTMX
    )


def test_a_question_listing_many_words_is_invalid_and_says_why(client, catalog, fixed_secret):
    fixed_secret("dog")
    game = start_game(client, role="guesser", judge="kb")
    assert GameConfig.from_dict(game.config).win_rule == "strict"
    html = ask(client, game, "Is it " + ", ".join(SIXTY) + "?", 0).content.decode()
    game.refresh_from_db()
    assert game.status == "playing" and not game.turns.exists()  # refused before it is asked
    assert "A guess must name one thing." in html and "You won" not in html
    assert "Not asked: this cost no turn." in html
    assert (
        "a question listing several things is invalid" in html
    )  # the rule is stated before asking
    won = ask(client, game, "Is it a dog?", 0).content.decode()
    assert "You won in 1 question!" in won


def test_a_guess_of_another_thing_is_answered_no_and_says_so(client, catalog, fixed_secret):
    fixed_secret("dinghy")
    game = start_game(client, role="guesser", judge="kb")
    html = ask(client, game, "Is it a canoe?", 0).content.decode()
    turn = game.turns.get()
    assert (turn.verdict, turn.feedback) == ("no", "No, it is not a canoe.")
    assert "No, it is not a canoe." in html and "dinghy" not in html
    assert (
        ask(client, game, "Is it a kind of boat?", 1).content.decode().count("badge verdict-yes")
        == 1
    )


def test_thats_my_word_only_for_a_guess_with_undo_until_the_next_answer(client, catalog, player):
    client.force_login(player)
    game = start_game(client, role="answerer", guesser="infogain")
    pose(game, "Is it a kind of physical object?")  # the question of the report
    page = client.get(f"/play/{game.pk}/").content.decode()
    assert 'id="my-word"' not in page and "offered when the question is a guess of one word" in page
    refused = answer(client, game, "finished")
    assert refused.status_code == 400 and "is not a guess of one word" in refused.content.decode()
    assert game.turns.count() == 0 and not JudgeVote.objects.exists()

    pose(game, "Is it an object?")  # issue 34 item 4: a broad category is not someone's word
    assert 'id="my-word"' not in client.get(f"/play/{game.pk}/").content.decode()
    refused = answer(client, game, "finished")
    assert refused.status_code == 400 and "broad category" in refused.content.decode()
    assert game.turns.count() == 0

    pose(game, "Is it a dog?")
    assert 'id="my-word"' in client.get(f"/play/{game.pk}/").content.decode()
    ended = answer(client, game, "finished").content.decode()
    assert (
        "found your word in 1 question" in ended
        and 'id="secret-input"' in ended
        and 'id="undo-answer"' in ended
    )
    wrong = client.post(f"/play/{game.pk}/confirm/", {"secret": "cat"}, **HTMX).content.decode()
    assert "must be the one the last question names" in wrong

    undone = client.post(f"/play/{game.pk}/undo/", **HTMX).content.decode()
    game.refresh_from_db()
    assert (game.status, game.outcome, game.n_turns) == ("playing", "playing", 0)
    assert game.state["pending"]["question"] == "Is it a dog?" and not JudgeVote.objects.exists()
    assert 'id="pending-question">Is it a dog?<' in undone and 'id="undo-answer"' not in undone

    answer(client, game, "no")  # the next answer: its undo now takes back this one
    game.refresh_from_db()
    assert game.n_turns == 1 and game.turns.get().verdict == "no" and JudgeVote.objects.count() == 1
    assert 'id="undo-answer"' in client.get(f"/play/{game.pk}/").content.decode()


def test_the_confirmed_word_must_be_the_guessed_one_and_then_no_undo(client, catalog, player):
    client.force_login(player)
    game = start_game(client, role="answerer", guesser="infogain")
    pose(game, "Is it a sofa?")
    answer(client, game, "finished")
    html = client.post(f"/play/{game.pk}/confirm/", {"secret": "couch"}, **HTMX).content.decode()
    assert (
        'id="revealed-secret">couch<' in html and 'id="undo-answer"' not in html
    )  # a synonym of sofa
    assert client.post(f"/play/{game.pk}/undo/", **HTMX).status_code == 409
