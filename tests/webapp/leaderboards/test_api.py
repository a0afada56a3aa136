"""GET /api/leaderboards/: the newest snapshot of a board, readable by guests, documented in the
schema."""

from __future__ import annotations

import pytest

from webapp.leaderboards.models_board import models_key
from webapp.leaderboards.services import leaderboards_refresh

pytestmark = pytest.mark.django_db
URL = "/api/leaderboards/"


@pytest.fixture
def refreshed(spec, word_list, make_game, make_user):
    kb = spec("kb", role="judge", kind="kb")
    alpha = spec("alpha")
    for won in (True, False, True):
        make_game("apple", won, 8, guesser=alpha, judge=kb, word_list=word_list)
    make_game("apple", True, 30, max_turns=50, guesser=alpha, judge=kb, word_list=word_list)
    make_game(
        "apple", True, 6, mode="human_guesser", player=make_user("player", username="pat"), judge=kb
    )
    leaderboards_refresh()
    return {"kb": kb, "word_list": word_list}


def test_models_board_default_key_rows_and_key_list(client, refreshed):
    response = client.get(URL, {"board": "models"})
    assert response.status_code == 200
    body = response.json()
    wl, kb = refreshed["word_list"], refreshed["kb"]
    assert body["board"] == "models" and body["key"] == models_key(wl.pk, kb.pk, 20)
    (row,) = body["rows"]
    assert (
        row["name"] == "alpha"
        and row["games"] == 3
        and row["success"] == pytest.approx(2 / 3, abs=1e-6)
    )
    assert row["k"] == 3 and row["pass_at_k"] == 1.0 and row["preliminary"] is True
    assert (
        row["strict_success"] == row["reference_success"] == row["success"]
    )  # no stored questions to re-judge
    assert body["meta"]["win_rule"] == "reference"
    assert [k["max_turns"] for k in body["keys"]] == [20, 50]
    assert {k["win_rule"] for k in body["keys"]} == {"reference"}
    assert body["keys"][0]["word_list"] == {"id": wl.pk, "name": "test/words", "version": 2}
    assert (
        body["computed_at"]
        and body["checked_at"]
        and body["meta"]["label"].endswith("20 turns · reference rule")
    )

    other = client.get(URL, {"board": "models", "key": models_key(wl.pk, kb.pk, 50)}).json()
    assert other["key"].endswith("turns:50") and other["rows"][0]["games"] == 1


def test_humans_and_ability_boards(client, refreshed):
    humans = client.get(URL, {"board": "humans"}).json()
    assert humans["board"] == "humans" and humans["key"] == ""
    assert [(r["name"], r["games"], r["wins"], r["rank"]) for r in humans["rows"]] == [
        ("pat", 1, 1, 1)
    ]
    assert "keys" not in humans

    ability = client.get(URL, {"board": "ability"}).json()
    assert {(r["name"], r["kind"]) for r in ability["rows"]} == {
        ("pat", "human"),
        ("alpha", "model"),
    }
    assert all(r["theta_lo"] < r["theta"] < r["theta_hi"] for r in ability["rows"])


def test_bad_board_unknown_key_and_nothing_computed(client, db):
    assert client.get(URL, {"board": "humans"}).status_code == 404  # nothing computed yet
    assert client.get(URL, {"board": "elo"}).status_code == 400
    leaderboards_refresh()
    assert client.get(URL, {"board": "humans"}).status_code == 200
    assert client.get(URL, {"board": "models", "key": "wl:1|judge:2|turns:20"}).status_code == 404


def test_the_endpoint_is_in_the_openapi_schema(client, db):
    schema = client.get("/api/schema/", {"format": "json"})
    assert schema.status_code == 200
    body = schema.json()
    operation = body["paths"]["/api/leaderboards/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"board", "key"}
    components = body["components"]["schemas"]
    assert "LeaderboardSnapshot" in components
    assert "theta" in components["AbilityRow"]["properties"]
    assert "pass_at_k" in components["ModelRow"]["properties"]
    assert {"strict_success", "reference_success"} <= set(components["ModelRow"]["properties"])


def test_snapshots_from_before_the_win_rules_still_serialise(client, refreshed):
    from webapp.leaderboards.models import LeaderboardSnapshot

    for snapshot in LeaderboardSnapshot.objects.filter(board__in=("models", "models_index")):
        snapshot.rows = [
            {
                k: v
                for k, v in r.items()
                if "win_rule" not in k and "strict" not in k and "reference" not in k
            }
            for r in snapshot.rows
        ]
        snapshot.save()
    response = client.get(URL, {"board": "models"})
    assert response.status_code == 200 and "strict_success" not in response.json()["rows"][0]
