"""Arena pages and API: a battle through the test client, names hidden until the end, the board on
/leaderboards/ and the API, and the researcher page."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from tests.webapp.arena.support import STRONG, WEAK, stored_battle
from tests.webapp.play.support import truthful_verdict
from webapp.arena.models import ArenaExclusion, Battle
from webapp.leaderboards.services import leaderboards_refresh
from webapp.play import services as play_services

pytestmark = pytest.mark.django_db


@pytest.fixture
def player(client, arena):
    user = get_user_model().objects.create_user("ada", password="pw-ada-123456")
    client.force_login(user)
    return user


@pytest.fixture
def researcher(client, arena):
    user = get_user_model().objects.create_user("rita", password="pw-rita-123456")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client.force_login(user)
    return user


def _names_in(text: str) -> set[str]:
    return {n for n in (STRONG, WEAK) if n in text}


def test_a_battle_through_the_pages_hides_names_until_the_end(client, player, monkeypatch):
    monkeypatch.setattr(play_services, "draw_secret", lambda words, judge: "dog")
    response = client.post("/arena/start/", {"word_list": "dbrl/paper_test"})
    battle = Battle.objects.get()
    assert response.status_code == 302 and str(battle.public_id) in response["Location"]
    page = client.get(response["Location"]).content.decode()
    assert _names_in(page) == set()
    assert f"/play/{battle.game_a_id}/" not in page and f"/games/{battle.game_a_id}" not in page
    assert 'data-shortcut="y"' in page and page.count('data-shortcut="y"') == 1
    for _ in range(60):
        battle.refresh_from_db()
        if battle.finished:
            break
        api = client.get(f"/api/arena/battles/{battle.public_id}/").json()
        assert _names_in(str(api)) == set()
        side = next(s for s in api["sides"] if s["side"] == api["active_side"])
        panel = client.post(
            f"/arena/{battle.public_id}/answer/",
            {
                "side": side["side"],
                "verdict": truthful_verdict("dog", side["pending"]),
                "expected_index": side["next_index"],
            },
            HTTP_HX_REQUEST="true",
        )
        assert panel.status_code == 200
    page = client.get(f"/arena/{battle.public_id}/").content.decode()
    assert _names_in(page) == {STRONG, WEAK} and "top candidates" in page


def test_the_api_starts_answers_and_finishes_a_kept_word_battle(client, player):
    start = client.post("/api/arena/battles/", {}, content_type="application/json")
    assert start.status_code == 201
    body = start.json()
    assert body["state"] == "playing" and body["word"] is None
    url = f"/api/arena/battles/{body['id']}/"
    for _ in range(60):
        if body["needs_word"]:
            break
        side = next(s for s in body["sides"] if s["side"] == body["active_side"])
        body = client.post(
            url + "answer/",
            {"side": side["side"], "verdict": "no", "expected_index": side["next_index"]},
            content_type="application/json",
        ).json()
    wrong = client.post(
        url + "answer/",
        {"side": "a", "verdict": "yes", "expected_index": 0},
        content_type="application/json",
    )
    assert wrong.status_code == 409
    done = client.post(url + "finish/", {"word": "teapot"}, content_type="application/json")
    assert done.status_code == 200
    assert done.json()["state"] == "finished" and done.json()["outcome"] == "tie"
    assert {s["name"] for s in done.json()["sides"]} == {STRONG, WEAK}


def test_another_person_cannot_read_a_battle(client, player):
    body = client.post("/api/arena/battles/", {}, content_type="application/json").json()
    client.logout()
    assert client.get(f"/api/arena/battles/{body['id']}/").status_code == 403
    assert client.get(f"/arena/{body['id']}/").status_code == 404


def test_the_board_is_read_from_the_snapshot_on_the_leaderboards_page_and_api(client, arena):
    assert client.get("/api/arena/board/").status_code == 404
    for outcome in ["a"] * 4 + ["tie"]:
        stored_battle(STRONG, WEAK, outcome)
    stored_battle(STRONG, WEAK, "")  # unfinished: not counted
    leaderboards_refresh()
    board = client.get("/api/arena/board/").json()
    assert board["meta"]["battles"] == 5
    assert [r["name"] for r in board["rows"]] == [STRONG, WEAK]
    assert board["rows"][0]["wins"] == 4 and board["rows"][0]["preliminary"] is True
    page = client.get("/leaderboards/").content.decode()
    assert 'id="arena-table"' in page and STRONG in page and "preliminary" in page


def test_an_all_ties_board_shows_its_intervals_undetermined_not_as_precise(client, arena):
    for _ in range(3):
        stored_battle(STRONG, WEAK, "tie")
    leaderboards_refresh()
    table = client.get("/leaderboards/").content.decode().split('id="arena-table"')[1]
    assert table.count("undetermined") == 2 and "1000 – 1000" not in table


def test_people_page_is_for_researchers_and_excludes_with_a_record(client, researcher):
    ada = get_user_model().objects.create_user("ada", password="pw-ada-123456")
    stored_battle(STRONG, WEAK, "a", player=ada)
    page = client.get("/arena/people/")
    assert page.status_code == 200 and "ada" in page.content.decode()
    client.post("/arena/people/", {"user_id": ada.pk, "action": "exclude", "reason": "spam"})
    record = ArenaExclusion.objects.get(player=ada)
    assert record.excluded_by == researcher and record.reason == "spam"
    client.force_login(ada)
    assert client.get("/arena/people/").status_code == 403


def test_the_start_page_and_nav_link(client, arena):
    page = client.get("/arena/").content.decode()
    assert 'action="/arena/start/"' in page
    assert 'href="/arena/"' in client.get("/").content.decode()


def test_a_running_battles_games_are_hidden_everywhere_games_are_shown(client, player):
    body = client.post("/api/arena/battles/", {}, content_type="application/json").json()
    battle = Battle.objects.get()
    game = battle.game_a
    game.status, game.outcome = "finished", "lost"  # one side over: home lists finished games
    game.save()
    assert _names_in(client.get("/").content.decode()) == set()  # the recent games
    link = f'href="/games/{game.pk}/"'
    for url in ("/", "/games/", "/players/ada/"):  # (the filter lists every guesser's name)
        assert link not in client.get(url).content.decode(), url
    for url in (f"/games/{game.pk}/", f"/play/{game.pk}/", f"/api/games/{game.pk}/"):
        assert client.get(url).status_code == 404, url
    client.post(f"/api/arena/battles/{body['id']}/finish/", {"give_up": True}, "application/json")
    assert link in client.get("/games/").content.decode()  # over: shown as any game
    assert client.get(f"/games/{game.pk}/").status_code == 200


def test_plays_actions_on_a_running_battles_game_answer_404_without_naming_it(client, player):
    client.post("/api/arena/battles/", {}, content_type="application/json")
    battle = Battle.objects.get()
    game = battle.game_a
    for action, data in (
        ("answer", {"verdict": "yes", "expected_index": 99}),  # refused: the panel came back
        ("answer", {"verdict": "no", "expected_index": 0}),
        ("undo", {}),
        ("abandon", {}),
        ("first-question", {}),
    ):
        response = client.post(f"/play/{game.pk}/{action}/", data, HTTP_HX_REQUEST="true")
        assert response.status_code == 404, action
        assert _names_in(response.content.decode()) == set(), action
    game.refresh_from_db()
    assert game.n_turns == 0 and game.status == "playing"  # nothing was done through play


def test_a_word_too_long_is_refused_with_a_message_about_the_word(client, player):
    client.post("/api/arena/battles/", {}, content_type="application/json")
    battle = Battle.objects.get()
    url = f"/arena/{battle.public_id}/finish/"
    panel = client.post(url, {"word": "x" * 201}, HTTP_HX_REQUEST="true").content.decode()
    assert "word" in panel.split('role="alert">')[1].split("</p>")[0]


def test_plays_api_refuses_a_running_battles_game_which_it_would_fingerprint(client, player):
    client.post("/api/arena/battles/", {}, content_type="application/json")
    game = Battle.objects.get().game_a
    response = client.post(
        f"/api/games/{game.pk}/turns/",
        {"verdict": "no", "expected_index": 0},  # its answer shows the guesser's candidates left
        content_type="application/json",
    )
    assert response.status_code == 404
    game.refresh_from_db()
    assert game.n_turns == 0


def test_a_guest_who_logs_in_takes_their_battles_along_with_the_games(client, arena):
    client.post("/api/arena/battles/", {}, content_type="application/json")  # as a guest
    battle = Battle.objects.get()
    assert battle.player is None and battle.guest_key
    ada = get_user_model().objects.create_user("ada", password="pw-ada-123456")
    client.force_login(ada)
    battle.refresh_from_db()
    assert battle.game_a.player == battle.game_b.player == ada  # play claimed the games
    assert battle.player == ada and battle.guest_key == ""  # so excluding ada covers it
    assert client.get(f"/api/arena/battles/{battle.public_id}/").status_code == 200


def test_behind_a_trusted_proxy_each_guest_has_their_own_start_limit_and_identity(
    client, arena, settings
):
    from django.test import Client

    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}  # TRUSTED_PROXIES=1
    settings.ARENA_START_LIMIT = (1, 3600)
    proxy = {"REMOTE_ADDR": "10.0.0.1"}  # every guest arrives from the proxy

    def start(browser, address):
        return browser.post("/api/arena/battles/", {}, HTTP_X_FORWARDED_FOR=address, **proxy)

    assert start(client, "198.51.100.31").status_code == 201
    assert start(Client(), "198.51.100.32").status_code == 201  # another guest: not limited
    assert start(client, "198.51.100.31").status_code == 429  # the first guest's limit holds
    assert Battle.objects.values("guest_key").distinct().count() == 2  # two people, not one


def test_a_failing_guessers_panel_is_one_the_battle_page_swaps_in(client, player, monkeypatch):
    """The panel saying a guesser failed must reach the page: the battle page's htmx swaps no
    5xx, so the answer would seem to do nothing."""
    from games.guessers.base import Guesser
    from tests.webapp.play.test_game_page import _swapped

    client.post("/arena/start/", {})
    battle = Battle.objects.get()
    page = client.get(f"/arena/{battle.public_id}/").content.decode()

    def fail(self, state):
        raise RuntimeError("model server down")

    monkeypatch.setattr(Guesser, "ask", fail)
    answer = {"side": "a", "verdict": "no", "expected_index": 0}
    panel = client.post(f"/arena/{battle.public_id}/answer/", answer, HTTP_HX_REQUEST="true")
    assert "Guesser A failed" in panel.content.decode()
    assert _swapped(page, panel.status_code), panel.status_code
    without_htmx = client.post(f"/arena/{battle.public_id}/answer/", answer)
    assert without_htmx.status_code == 302  # the error as a message on the page


@pytest.mark.parametrize("visitor", ["guest", "other player"])
def test_no_arena_action_on_someone_elses_battle_shows_or_changes_it(client, player, visitor):
    """Every arena page and API action on another person's running battle, with and without htmx,
    by a guest holding a CSRF token or another player: refused (403/404), and the answer names
    neither guesser, shows no question and changes nothing."""
    from django.test import Client

    body = client.post("/api/arena/battles/", {}, content_type="application/json").json()
    battle = Battle.objects.get()
    questions = [
        (g.state.get("pending") or {}).get("question") for g in (battle.game_a, battle.game_b)
    ]
    assert all(questions)
    stranger = Client(enforce_csrf_checks=True)
    if visitor == "other player":
        stranger.force_login(get_user_model().objects.create_user("bob", password="pw-bob-12345"))
    stranger.get("/arena/")  # a page with a form: the CSRF cookie
    csrf = {"HTTP_X_CSRFTOKEN": stranger.cookies["csrftoken"].value}
    page, api = f"/arena/{body['id']}/", f"/api/arena/battles/{body['id']}/"
    answer = {"side": "a", "verdict": "yes", "expected_index": 0}
    requests = [("get", page, {}), ("get", api, {})]
    for htmx in ({}, {"HTTP_HX_REQUEST": "true"}):
        requests += [
            ("post", page + "answer/", {"data": answer, **htmx}),
            ("post", page + "finish/", {"data": {"word": "dog"}, **htmx}),
            ("post", page + "abandon/", htmx),
        ]
    requests += [
        ("post", api + "answer/", {"data": answer, "content_type": "application/json"}),
        ("post", api + "finish/", {"data": {"give_up": True}, "content_type": "application/json"}),
    ]
    for method, url, kwargs in requests:
        response = getattr(stranger, method)(url, **kwargs, **csrf)
        text = response.content.decode()
        assert response.status_code in (403, 404), (url, response.status_code)
        assert _names_in(text) == set() and not any(q in text for q in questions), url
    battle.refresh_from_db()
    assert battle.game_a.n_turns == battle.game_b.n_turns == 0
    assert battle.game_a.status == battle.game_b.status == "playing"
