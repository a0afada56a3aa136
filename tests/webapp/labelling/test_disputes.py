"""A player's "That's wrong" on a judge's answer (issue 34 item 25): their answer is stored and the
turn queued for labelling, from the game page's button or the API; nobody else, no rule-decided
turn and no running game can be disputed."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.webapp.labelling.support import store_game
from webapp.labelling import selectors
from webapp.labelling.models import DisagreementItem, JudgeVote
from webapp.play.models import Game, GameMode, Turn

pytestmark = pytest.mark.django_db
OTHER = {"yes": "no", "no": "yes", "unknown": "yes"}


@pytest.fixture
def owned(games, make_user):
    """A finished game a person asked in (the kb judge answered), and its player signed in."""
    player = make_user("player")
    game = store_game(
        "seal", ["Is it made of wood?", "hello", "Is it a mammal?"], mode=GameMode.HUMAN_GUESSER
    )
    Game.objects.filter(pk=game.pk).update(player=player)
    client = Client()
    client.force_login(player)
    return game, player, client


def test_that_s_wrong_records_the_answer_and_queues_the_turn(owned, make_user):
    game, player, client = owned
    judged = Turn.objects.get(game=game, index=0)
    rule = Turn.objects.get(game=game, index=1)  # "hello": invalid by the rules
    page = client.get(f"/play/{game.pk}/").content.decode()
    assert f"/labelling/turns/{judged.pk}/dispute/" in page and "That's wrong" in page
    assert f"/labelling/turns/{rule.pk}/dispute/" not in page
    right = OTHER[judged.verdict]
    url = f"/labelling/turns/{judged.pk}/dispute/"
    answer = client.post(url, {"verdict": right}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and "queued for labelling" in answer.content.decode()
    item = DisagreementItem.objects.get(source_turn=judged)
    assert dict(item.votes.values_list("judge_name", "verdict")) == {
        "kb": judged.verdict,
        f"human:{player.username}": right,
    }
    assert JudgeVote.objects.get(item=item, user=player).verdict == right
    assert selectors.queue_candidates(make_user("annotator")).first() == item  # served first
    again = client.post(url, {"verdict": right}, HTTP_HX_REQUEST="true")
    assert again.status_code == 409 and "already disputed" in again.content.decode()
    assert client.post(url, {"verdict": right}).status_code == 302  # no htmx: back to the game
    assert Client().get(f"/games/{game.pk}/").status_code == 403  # hidden while being labelled


def test_only_the_player_disputes_a_judge_s_answer_in_a_finished_game(owned, make_user):
    game, player, client = owned
    judged, rule = Turn.objects.get(game=game, index=0), Turn.objects.get(game=game, index=1)
    right = OTHER[judged.verdict]
    stranger = Client()
    stranger.force_login(make_user("player"))
    url = f"/labelling/turns/{judged.pk}/dispute/"
    assert stranger.post(url, {"verdict": right}, HTTP_HX_REQUEST="true").status_code == 403
    assert Client().post(url, {"verdict": right}, HTTP_HX_REQUEST="true").status_code == 403
    no = Turn.objects.get(game=game, index=2)  # the judge said no
    same = client.post(
        f"/labelling/turns/{no.pk}/dispute/", {"verdict": no.verdict}, HTTP_HX_REQUEST="true"
    )
    assert same.status_code == 400 and "the judge did not give" in same.content.decode()
    ruled = client.post(
        f"/labelling/turns/{rule.pk}/dispute/", {"verdict": "yes"}, HTTP_HX_REQUEST="true"
    )
    assert ruled.status_code == 400
    Game.objects.filter(pk=game.pk).update(status="playing")
    assert client.post(url, {"verdict": right}, HTTP_HX_REQUEST="true").status_code == 409
    assert not DisagreementItem.objects.filter(source_turn__game=game).exists()


def test_the_api_disputes_too(owned):
    game, player, _ = owned
    judged = Turn.objects.get(game=game, index=2)
    api = APIClient()
    body = {"turn": judged.pk, "verdict": OTHER[judged.verdict]}
    assert api.post("/api/labelling/disputes/", body, format="json").status_code == 403
    api.force_authenticate(player)
    answer = api.post("/api/labelling/disputes/", body, format="json")
    assert answer.status_code == 201
    assert answer.json() == {
        "item_id": DisagreementItem.objects.get(source_turn=judged).pk,
        "verdict": OTHER[judged.verdict],
        "queued": True,
    }
    bad = api.post("/api/labelling/disputes/", {"turn": judged.pk, "verdict": "maybe"})
    assert bad.status_code == 400 and "verdict" in bad.json()
