"""Blind labelling: while an item is open, no page or API shows a judge's answer to it (the games
with its secret are hidden from everyone but researchers and their own players), and a running
game never shows the guesser's top candidates."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from webapp.labelling.models import DisagreementItem
from webapp.play.models import Game

pytestmark = pytest.mark.django_db


def _leaks(client, game) -> list[str]:
    """The places where `client` can read `game`'s verdicts."""
    places = []
    if f'href="/games/{game.pk}/"' in client.get(f"/games/?word={game.secret}").content.decode():
        places.append("game list")
    for url in (f"/games/{game.pk}/", f"/games/{game.pk}.json", f"/api/games/{game.pk}/", f"/play/{game.pk}/"):
        if client.get(url).status_code == 200:
            places.append(url)
    return places


def test_no_page_or_api_shows_an_open_items_game_to_an_annotator_signed_in_or_out(
        queued, make_user):
    seal = Game.objects.get(secret="seal")
    assert DisagreementItem.objects.filter(secret="seal", gold="").exists()
    annotator = Client()
    annotator.force_login(make_user("annotator"))
    assert _leaks(annotator, seal) == []
    assert _leaks(Client(), seal) == []  # logging out does not help
    assert _leaks(APIClient(), seal) == []
    researcher = Client()
    researcher.force_login(make_user("researcher"))
    assert _leaks(researcher, seal) == ["game list", f"/games/{seal.pk}/", f"/games/{seal.pk}.json",
                                        f"/api/games/{seal.pk}/", f"/play/{seal.pk}/"]


def test_a_game_shows_again_once_its_secrets_items_are_closed(queued):
    seal = Game.objects.get(secret="seal")
    DisagreementItem.objects.filter(secret="seal").update(gold="yes")
    assert len(_leaks(Client(), seal)) == 5
    assert _leaks(Client(), Game.objects.get(secret="mouse")) == []  # still being labelled


def test_a_players_own_game_stays_visible_to_them(queued, make_user):
    owner = make_user("player", "annotator")
    seal = Game.objects.get(secret="seal")
    Game.objects.filter(pk=seal.pk).update(player=owner)
    client = Client()
    client.force_login(owner)
    assert client.get(f"/games/{seal.pk}/").status_code == 200
    assert f'href="/games/{seal.pk}/"' in client.get(f"/players/{owner.username}/").content.decode()
    assert f'href="/games/{seal.pk}/"' not in Client().get(f"/players/{owner.username}/").content.decode()


def test_games_without_open_items_are_untouched(games):
    assert not DisagreementItem.objects.exists()  # no disagreements job has run
    assert all(len(_leaks(Client(), game)) == 5 for game in Game.objects.all())
