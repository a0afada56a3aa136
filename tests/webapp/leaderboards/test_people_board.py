"""Issue 22 item 11: the People board ranks players within one word list at a time (words differ in
difficulty from list to list), says so, names the list on every row and lets the reader pick one."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from webapp.catalog.models import WordList
from webapp.leaderboards.selectors import leaderboard_latest
from webapp.leaderboards.services import leaderboards_refresh

pytestmark = pytest.mark.django_db
HUMAN = {"mode": "human_guesser"}


@pytest.fixture
def two_lists(make_game, word_list):
    """ann wins everything on the easy list; bob plays the hard list, where ann loses once."""
    hard = WordList.objects.create(name="test/hard", version=1)
    ann, bob = (
        get_user_model().objects.create_user(username=n, password="a-long-test-password")
        for n in ("ann", "bob")
    )
    for i in range(6):
        make_game(f"e{i}", True, 5, player=ann, word_list=word_list, **HUMAN)
    make_game("h0", False, 20, player=ann, word_list=hard, **HUMAN)
    for i, won in enumerate([True, False, True]):
        make_game(f"h{i}", won, 12, player=bob, word_list=hard, **HUMAN)
    make_game("h9", True, 9, guest_key="g", word_list=hard, **HUMAN)
    leaderboards_refresh()
    return word_list, hard


def test_each_word_list_is_ranked_on_its_own(two_lists):
    easy, hard = two_lists
    humans = leaderboard_latest("humans")
    rows = [(r["word_list_key"], r["name"], r["rank"], r["games"], r["wins"]) for r in humans.rows]
    assert rows == [
        (f"wl:{easy.pk}", "ann", 1, 6, 6),  # the most played list first
        (f"wl:{hard.pk}", "bob", 1, 3, 2),  # ranked 1 on its own list, not below ann
        (f"wl:{hard.pk}", "ann", 2, 1, 0),
        (f"wl:{hard.pk}", "guests", None, 1, 1),
    ]
    assert [(wl["name"], wl["games"], wl["players"]) for wl in humans.meta["word_lists"]] == [
        ("test/words", 6, 1),
        ("test/hard", 5, 2),
    ]
    assert humans.meta["players"] == 2 and humans.meta["guest_games"] == 1


def test_the_page_shows_one_list_at_a_time_and_lets_the_reader_pick(client, two_lists):
    easy, hard = two_lists
    html = client.get("/leaderboards/").content.decode()
    assert "One ranking per word list" in html and '<select id="people-list" name="people">' in html
    assert f'<option value="wl:{hard.pk}">test/hard v1 (5 games, 2 players)</option>' in html
    board = html[html.index('<div id="humans-board">') :]
    assert "<caption>People on test/words v2</caption>" in board
    assert 'href="/players/ann/"' in board and 'href="/players/bob/"' not in board

    partial = client.get(
        "/leaderboards/", {"board": "humans", "people": f"wl:{hard.pk}"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert partial.startswith('<div id="humans-board">') and "<html" not in partial
    assert "<caption>People on test/hard v1</caption>" in partial
    assert partial.index('href="/players/bob/"') < partial.index('href="/players/ann/"')
    assert "guests (all, pooled)" in partial

    missing = client.get("/leaderboards/", {"people": "wl:999"}).content.decode()
    assert "No people's games on that word list" in missing


def test_the_api_rows_name_their_word_list(client, two_lists):
    easy, _ = two_lists
    body = client.get("/api/leaderboards/", {"board": "humans"}).json()
    first = body["rows"][0]
    assert (first["word_list"], first["word_list_version"], first["word_list_key"]) == (
        "test/words",
        2,
        f"wl:{easy.pk}",
    )


def test_a_game_whose_secret_the_player_chose_does_not_count(make_game, word_list):
    """A researcher may choose the secret of a game they ask about (the API's `secret`): they knew
    the word, so the game is no attempt at a drawn word and stays off the People board."""
    ann = get_user_model().objects.create_user(username="ann", password="a-long-test-password")
    make_game("e0", False, 20, player=ann, word_list=word_list, **HUMAN)
    for i in range(3):
        make_game(
            f"c{i}", True, 1, player=ann, word_list=word_list, state={"secret_source": "chosen"},
            **HUMAN,
        )  # fmt: skip
    leaderboards_refresh()
    rows = [(r["name"], r["games"], r["wins"]) for r in leaderboard_latest("humans").rows]
    assert rows == [("ann", 1, 0)]
