"""The play API: whole games in each role, refusals with sentences, guest throttling, ownership,
schema."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.webapp.play.support import truthful_verdict
from webapp.play.models import Game, Turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return APIClient()


def start(api, **body):
    response = api.post("/api/games/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def send(api, game_id: int, **body):
    return api.post(f"/api/games/{game_id}/turns/", body, format="json")


def test_a_whole_game_as_the_guesser(api, catalog, player, fixed_secret):
    fixed_secret("dog")
    api.force_authenticate(player)
    game = start(api, role="guesser", judge="kb")
    assert (game["role"], game["judge"], game["secret"], game["next_index"]) == (
        "guesser",
        "kb",
        None,
        0,
    )
    assert (
        game["word_list"] == "dbrl/paper_test v1"
        and game["turns"] == []
        and game["pending"] is None
    )

    first = send(api, game["id"], question="Is it a kind of animal?", expected_index=0)
    assert first.status_code == 201
    assert first.json()["turn"]["verdict"] == "yes" and first.json()["game"]["next_index"] == 1
    assert first.json()["turn"]["judge_raw"] == ""  # hidden while the game runs
    won = send(api, game["id"], question="Is it a dog?", expected_index=1).json()
    assert won["turn"]["verdict"] == "finished" and won["game"]["outcome"] == "won"

    detail = api.get(f"/api/games/{game['id']}/").json()
    assert detail["secret"] == "dog" and [t["verdict"] for t in detail["turns"]] == [
        "yes",
        "finished",
    ]
    assert detail["turns"][0]["judge_raw"] == "isa:animal" and detail["player"] == player.username
    assert detail["next_index"] is None and detail["config"]["max_turns"] == 20


def test_the_default_judge_is_the_pretrained_judge_and_its_turns_say_how_sure_it_was(
    api, catalog, player, fixed_secret
):
    fixed_secret("dog")
    api.force_authenticate(player)
    game = start(api, role="guesser")
    assert game["judge"] == "pretrained"
    turn = send(api, game["id"], question="Is it a kind of mammal?", expected_index=0).json()[
        "turn"
    ]
    assert (
        turn["verdict"] == "yes"
        and turn["extra"]["p_yes"] > 0.5
        and turn["extra"]["judge"] == "pretrained"
    )
    detail = api.get(f"/api/games/{game['id']}/").json()
    assert detail["turns"][0]["extra"]["p_yes"] == turn["extra"]["p_yes"]


def test_a_whole_game_as_the_answerer_then_confirm_the_word(api, catalog, player):
    api.force_authenticate(player)
    assert start(api, role="answerer")["guesser"] == "natural"  # the default opponent
    game = start(api, role="answerer", guesser="infogain")  # answered from the KB: its world
    assert (
        game["role"] == "answerer"
        and game["guesser"] == "infogain"
        and game["pending"]["index"] == 0
    )
    while game["status"] == "playing":
        pending = game["pending"]
        result = send(
            api,
            game["id"],
            verdict=truthful_verdict("dog", pending["question"]),
            expected_index=pending["index"],
        )
        assert result.status_code == 201, result.content
        assert result.json()["turn"]["judged_by"] == player.username
        game = result.json()["game"]
    assert game["outcome"] == "won" and game["secret"] == ""  # the person has not confirmed it yet

    confirmed = send(api, game["id"], action="confirm_secret", secret="dog")
    assert confirmed.status_code == 200
    state = confirmed.json()["game"]
    assert (
        state["secret"] == "dog"
        and state["kb_check"]["disagreements"] == []
        and "turns" not in state
    )
    trajectory = api.get(f"/api/games/{game['id']}/").json()
    assert (
        trajectory["secret"] == "dog"
        and len(trajectory["turns"]) == trajectory["n_turns"] == state["n_turns"]
    )
    assert all(t["top_candidates"] and len(t["top_candidates"]) == 5 for t in trajectory["turns"])


def test_refusals_are_sentences_with_the_right_status(api, catalog, player, fixed_secret):
    fixed_secret("dog")
    api.force_authenticate(player)
    game = start(api, role="guesser")
    stale = send(api, game["id"], question="Is it alive?", expected_index=3)
    assert stale.status_code == 409 and "is not the next one" in stale.json()["detail"]
    wrong_kind = send(api, game["id"], verdict="yes", expected_index=0)
    assert wrong_kind.status_code == 400 and "send a question" in wrong_kind.json()["detail"]
    assert send(api, game["id"], question="Is it a dog?", expected_index=0).status_code == 201
    after = send(api, game["id"], question="Is it a cat?", expected_index=1)
    assert after.status_code == 409 and after.json()["detail"].startswith(
        "This game is over (won after 1 questions)"
    )
    missing = send(api, game["id"], action="question", question="Is it?")
    assert missing.status_code == 400 and "expected_index" in missing.json()
    assert api.get("/api/games/999999/").status_code == 404
    assert Turn.objects.filter(game_id=game["id"]).count() == 1


def test_a_100_kb_question_gets_an_invalid_verdict(api, catalog, player):
    api.force_authenticate(player)
    game = start(api, role="guesser")
    response = send(
        api, game["id"], question="Is it " + "very " * 20_000 + "big?", expected_index=0
    )
    assert response.status_code == 201 and response.json()["turn"]["verdict"] == "invalid"


def test_guests_play_through_the_api_and_only_their_session_continues(api, catalog):
    game = start(api, role="guesser")
    assert game["player"] is None and game["guest"] is True
    assert send(api, game["id"], question="Is it alive?", expected_index=0).status_code == 201
    stranger = send(APIClient(), game["id"], question="Is it big?", expected_index=1)
    assert stranger.status_code == 403 and "belongs to someone else" in stranger.json()["detail"]
    assert Game.objects.get(pk=game["id"]).n_turns == 1


def test_a_player_cannot_continue_someone_elses_game(api, catalog, make_user):
    owner, other = make_user("player"), make_user("player")
    api.force_authenticate(owner)
    game = start(api, role="answerer")
    intruder = APIClient()
    intruder.force_authenticate(other)
    refused = send(intruder, game["id"], verdict="yes", expected_index=0)
    assert refused.status_code == 403
    assert send(intruder, game["id"], action="abandon").status_code == 403
    assert (
        Game.objects.get(pk=game["id"]).n_turns == 0
        and Game.objects.get(pk=game["id"]).status == "playing"
    )


def test_guests_are_throttled_but_players_are_not(api, catalog, player, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"guest_play": "3/minute"},
    }
    game = start(api, role="guesser")
    assert send(api, game["id"], question="Is it alive?", expected_index=0).status_code == 201
    assert send(api, game["id"], question="Is it big?", expected_index=1).status_code == 201
    throttled = send(api, game["id"], question="Is it red?", expected_index=2)
    assert (
        throttled.status_code == 429
        and "Guests may play only so fast" in throttled.json()["detail"]
    )
    assert api.get(f"/api/games/{game['id']}/").status_code == 200  # reading is not limited
    assert Game.objects.get(pk=game["id"]).n_turns == 2

    signed_in = APIClient()
    signed_in.force_authenticate(player)
    for _ in range(4):
        start(signed_in, role="guesser")


def test_the_schema_documents_the_play_endpoints(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    assert {"/api/games/", "/api/games/{game_id}/", "/api/games/{game_id}/turns/"} <= set(paths)
    turn_body = paths["/api/games/{game_id}/turns/"]["post"]["requestBody"]["content"][
        "application/json"
    ]["schema"]
    assert "expected_index" in str(schema["components"]["schemas"]) and turn_body


def test_a_running_game_never_shows_the_guessers_top_candidates(api, catalog, player):
    api.force_authenticate(player)
    game = start(api, role="answerer")
    answered = send(api, game["id"], verdict="no", expected_index=game["pending"]["index"])
    assert answered.status_code == 201 and answered.json()["turn"]["top_candidates"] is None
    for reader in (api, APIClient()):
        running = reader.get(f"/api/games/{game['id']}/").json()
        assert running["status"] == "playing" and running["turns"][0]["top_candidates"] is None
    assert api.get(f"/games/{game['id']}.json").json()["turns"][0]["top_candidates"] is None
    assert send(api, game["id"], action="abandon").status_code == 200
    ended = api.get(f"/api/games/{game['id']}/").json()
    assert ended["status"] != "playing" and len(ended["turns"][0]["top_candidates"]) == 5
