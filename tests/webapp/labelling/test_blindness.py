"""Blind labelling: while an item is open, no page or API shows a judge's answer to it (the games
with its secret are hidden from everyone but researchers and their own players), and a running
game never shows the guesser's top candidates."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from webapp.labelling.models import DisagreementItem, JudgeVote
from webapp.play.models import Game

pytestmark = pytest.mark.django_db


def _leaks(client, game) -> list[str]:
    """The places where `client` can read `game`'s verdicts."""
    places = []
    if f'href="/games/{game.pk}/"' in client.get(f"/games/?word={game.secret}").content.decode():
        places.append("game list")
    for url in (
        f"/games/{game.pk}/",
        f"/games/{game.pk}.json",
        f"/api/games/{game.pk}/",
        f"/play/{game.pk}/",
    ):
        if client.get(url).status_code == 200:
            places.append(url)
    return places


def test_no_page_or_api_shows_an_open_items_game_to_an_annotator_signed_in_or_out(
    queued, make_user
):
    seal = Game.objects.get(secret="seal")
    assert DisagreementItem.objects.filter(secret="seal", gold="").exists()
    annotator = Client()
    annotator.force_login(make_user("annotator"))
    assert _leaks(annotator, seal) == []
    assert _leaks(Client(), seal) == []  # logging out does not help
    assert _leaks(APIClient(), seal) == []
    researcher = Client()
    researcher.force_login(make_user("researcher"))
    assert _leaks(researcher, seal) == [
        "game list",
        f"/games/{seal.pk}/",
        f"/games/{seal.pk}.json",
        f"/api/games/{seal.pk}/",
        f"/play/{seal.pk}/",
    ]


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
    assert (
        f'href="/games/{seal.pk}/"'
        not in Client().get(f"/players/{owner.username}/").content.decode()
    )


def test_only_games_asking_an_open_question_are_hidden_and_say_so(queued, make_user):
    from tests.webapp.labelling.support import store_game

    other = store_game("seal", ["Is it made of wood?", "Is it a seal?"])  # no open question
    asking = store_game("seal", ["  IS IT AN ANIMAL?", "Is it a seal?"])  # an open one
    guest = Client()
    assert len(_leaks(guest, other)) == 5
    assert _leaks(guest, asking) == []
    for url in (f"/games/{asking.pk}/", f"/play/{asking.pk}/"):
        page = guest.get(url)
        assert page.status_code == 403 and "Hidden while being labelled" in page.content.decode()
    for url in (f"/api/games/{asking.pk}/", f"/games/{asking.pk}.json"):
        answer = guest.get(url)
        assert answer.status_code == 403 and "hidden while being" in answer.json()["detail"]
    DisagreementItem.objects.filter(secret="seal").update(gold="yes")
    assert len(_leaks(guest, asking)) == 5


def test_games_without_open_items_are_untouched(games):
    assert not DisagreementItem.objects.exists()  # no disagreements job has run
    assert all(len(_leaks(Client(), game)) == 5 for game in Game.objects.all())


def test_an_items_history_hides_earlier_answers_to_questions_still_in_the_queue(queued, make_user):
    from webapp.labelling import selectors, services

    annotator = make_user("annotator")
    organism = DisagreementItem.objects.get(secret="seal", question="Is it an organism?")
    animal = DisagreementItem.objects.get(secret="seal", question="Is it an animal?")
    history = selectors.blind_history(organism, annotator)
    assert len(history) == len(organism.history)
    shown = {(h["question"], h["verdict"]) for h in history}
    assert ("Is it an animal?", "hidden") in shown
    assert all(h["verdict"] == "hidden" for h in history if h["question"] == "Is it an animal?")
    assert any(h["verdict"] not in ("hidden",) for h in history)  # the other questions keep theirs
    services.label_submit(user=annotator, item_id=animal.pk, verdict="yes")
    assert "hidden" not in {h["verdict"] for h in selectors.blind_history(organism, annotator)}


def test_the_queue_page_and_api_never_show_an_open_questions_answer(queued, make_user):
    from webapp.labelling import selectors, services

    annotator = make_user("annotator")
    api = APIClient()
    api.force_authenticate(annotator)
    page = Client()
    page.force_login(annotator)
    for _ in range(DisagreementItem.objects.count()):
        item = api.get("/api/labelling/next/").json()["item"]
        if item is None:
            break
        still_open = {
            q
            for q in selectors._open_for(annotator)
            .filter(secret=item["secret"])
            .exclude(pk=item["id"])
            .values_list("question", flat=True)
        }
        assert all(h["verdict"] == "hidden" for h in item["history"] if h["question"] in still_open)
        html = page.get("/labelling/").content.decode()
        for h in item["history"]:
            if h["question"] in still_open:
                assert f'{h["question"]} — <span class="verdict-hidden">' in html
        services.label_submit(user=annotator, item_id=item["id"], verdict="yes")


def test_a_researcher_withdraws_one_job_s_unlabelled_items_in_the_admin(queued, make_user):
    from webapp.labelling import services

    labelled = DisagreementItem.objects.get(question="Is it a building?")
    services.label_submit(user=make_user("annotator"), item_id=labelled.pk, verdict="yes")
    researcher = Client()
    researcher.force_login(make_user("researcher"))
    page = researcher.get(f"/admin/labelling/disagreementitem/?job__id__exact={queued.pk}")
    assert page.status_code == 200 and "4 disagreement items" in page.content.decode()
    ids = list(DisagreementItem.objects.filter(job=queued).values_list("pk", flat=True))
    researcher.post(
        "/admin/labelling/disagreementitem/",
        {"action": "withdraw", "_selected_action": ids},
    )
    assert list(DisagreementItem.objects.all()) == [labelled]  # its label is kept
    votes = JudgeVote.objects.filter(job=queued)
    assert votes.count() == 20 and votes.filter(item=labelled).count() == 2  # votes kept
    assert len(_leaks(Client(), Game.objects.get(secret="seal"))) == 5
