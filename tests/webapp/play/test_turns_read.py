"""Issue 34 items 6, 7 and 14: how a game's turns read in the play history and on the trajectory
page: answers the rules decided say so, the guesser's belief shows only once it says something,
and the belief columns and the candidates chart only where the guesser has them."""

from __future__ import annotations

import json
import re

import pytest

from tests.webapp.play.support import model_game, visitor_of
from webapp.play import selectors

pytestmark = pytest.mark.django_db
QUESTIONS = ["Is it a kind of animal?", "Is it a kind of animal?", "Is it a dog?"]
UNIFORM = [["aardvark", 0.0002], ["aardwolf", 0.0002], ["aaron", 0.0002]]


def _game(belief: bool = True, candidates=(100, 0, 0)):
    """A model's game on "dog": a judged question, a repeat and the win (both by the rules)."""
    game = model_game("dog", QUESTIONS)
    for turn, left in zip(game.turns.order_by("index"), candidates):
        turn.extra["judge"] = "kb"  # as people's games store it, rule turns included
        turn.candidates_left = left
        turn.top_candidates = UNIFORM if turn.index == 0 else [["dog", 0.4], ["cat", 0.2]]
        if not belief:
            turn.belief = turn.delta_belief = None
        turn.save()
    return game


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr id="turn-\d" class="turn-row">(.*?)</tr>', html, re.S)


def _history(html: str) -> list[str]:
    return re.findall(r'<li class="turn" id="play-turn-\d">(.*?)</li>', html, re.S)


def test_answers_the_rules_decided_say_so(client, catalog):
    game = _game()
    judged, repeat, win = _history(client.get(f"/play/{game.pk}/").content.decode())
    assert "(rule)" not in judged and "Repeated <span" in repeat and "(rule)</span>" in repeat
    assert "(rule)</span>" in win
    rows = _rows(client.get(f"/games/{game.pk}/").content.decode())
    assert "(rule)" not in rows[0] and rows[0].rstrip().endswith("<td>kb</td>")
    for row in rows[1:]:  # not "kb": the judge was never asked
        assert "(rule)</span>" in row and row.rstrip().endswith("<td>rules</td>")
    context = selectors.game_play_context(game, visitor_of(None))
    assert "— Answer (rule): That's the word." in selectors.turn_announcement(context)


def test_the_belief_before_the_answer_shows_once_it_is_informative(client, catalog):
    game = _game()
    history = _history(client.get(f"/play/{game.pk}/").content.decode())
    assert "aardvark" not in history[0] and "belief before the answer" not in history[0]
    assert all("belief before the answer:</span> <span" in h for h in history[1:])
    assert "dog <span" in history[1] and "top 5" not in "".join(history)
    rows = _rows(client.get(f"/games/{game.pk}/").content.decode())
    assert "aardvark" not in rows[0] and "dog <span" in rows[1]


def test_belief_columns_only_where_the_guesser_has_a_belief(client, catalog):
    with_belief = client.get(f"/games/{_game().pk}/").content.decode()
    assert "ΔBelief</th>" in with_belief and 'id="chart-belief"' in with_belief
    html = client.get(f"/games/{_game(belief=False).pk}/").content.decode()
    assert "ΔBelief" not in html and 'id="chart-belief"' not in html
    assert all(row.count("<td") == 8 for row in _rows(html))  # no ΔBelief cells


def test_an_empty_candidate_set_is_explained(client, catalog):
    html = client.get(f"/games/{_game().pk}/").content.decode()
    note = re.search(r'<p class="muted" id="candidates-emptied">(.*?)</p>', html, re.S)[1]
    assert 'The set went empty after question\n        <a href="#turn-1">1</a>' in note
    assert "“Is it a kind of animal?”: Yes)" in note and "log scale" in html
    data = json.loads(
        re.search(r'id="chart-data" type="application/json">(.*?)</script>', html, re.S)[1]
    )
    assert data["candidates_left"] == [100, 0, 0] and data["candidates_emptied"]["index"] == 0
    never_empty = client.get(f"/games/{_game(candidates=(100, 3, 1)).pk}/").content.decode()
    assert 'id="candidates-emptied"' not in never_empty
