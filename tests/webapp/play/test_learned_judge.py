"""Playing with the learned judge: it is the default judge when the pretrained judge is not there,
its answers say how sure it was, and a person's answers are compared with the knowledge-base,
pretrained and learned judges (the pretrained judge's own play: test_pretrained_judge.py)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.webapp.play.support import start_from_page, visitor_of
from webapp.catalog.models import ModelSpec
from webapp.core.exceptions import ApplicationError
from webapp.play import judge_checks, services
from webapp.play.models import Game

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def judge_named(check: dict, name: str) -> dict:
    return next(j for j in check["judges"] if j["judge"] == name)


def answer_no_then_confirm(
    client, player, secret: str = "dog", turns: int = 3, guesser: str = ""
) -> tuple[Game, str]:
    client.force_login(player)
    game = start_from_page(client, role="answerer", max_turns=turns, guesser=guesser)
    for index in range(turns):
        client.post(f"/play/{game.pk}/answer/", {"verdict": "no", "expected_index": index}, **HTMX)
    html = client.post(f"/play/{game.pk}/confirm/", {"secret": secret}, **HTMX).content.decode()
    return Game.objects.get(pk=game.pk), html


def test_the_default_judge_is_pretrained_then_learned_then_the_knowledge_base(catalog, player):
    assert services.default_judge() == "pretrained"
    assert services.game_start(visitor=visitor_of(player), role="guesser").judge.name == (
        "pretrained"
    )
    ModelSpec.objects.filter(name="pretrained").update(is_active=False)
    assert services.default_judge() == "learned"
    assert services.game_start(visitor=visitor_of(player), role="guesser").judge.name == "learned"
    ModelSpec.objects.filter(name="learned").update(is_active=False)
    assert services.default_judge() == "kb"
    assert services.game_start(visitor=visitor_of(player), role="guesser").judge.name == "kb"


def test_learned_weights_that_do_not_load_fall_back_to_the_knowledge_base(
    client, catalog, player, tmp_path
):
    ModelSpec.objects.filter(name="pretrained").update(is_active=False)
    ModelSpec.objects.filter(name="learned").update(path=str(tmp_path / "missing.npz"))
    assert services.default_judge() == "kb"
    game, html = answer_no_then_confirm(client, player, turns=1)  # confirming still works
    learned = judge_named(game.state["kb_check"], "learned")
    assert (
        learned["available"] is False
        and "missing.npz" in learned["note"]
        and "rebuild" in learned["note"]
    )
    assert game.state["kb_check"]["judges"][0]["available"] and "missing.npz" in html
    with pytest.raises(ApplicationError) as err:  # named explicitly, it is refused with the reason
        services.game_start(visitor=visitor_of(player), role="guesser", judge="learned")
    assert err.value.status == 503 and "missing.npz" in err.value.message


def test_a_learned_judges_answer_shows_how_sure_it_was_in_the_panel_and_the_trajectory(
    client, catalog, fixed_secret
):
    fixed_secret("dog")
    client.post("/play/start/", {"role": "guesser", "judge": "learned"})
    game = Game.objects.get()
    panel = client.post(
        f"/play/{game.pk}/ask/",
        {"question": "Is it a kind of mammal?", "expected_index": 0},
        **HTMX,
    ).content.decode()
    p_yes = game.turns.get().extra["p_yes"]
    shown = (
        'Yes · <span class="confidence" title="how sure the judge was">'
        f"{round(100 * p_yes)}%</span>"
    )
    assert p_yes > 0.5 and shown in panel
    client.post(
        f"/play/{game.pk}/ask/", {"question": "Is it a kind of plant?", "expected_index": 1}, **HTMX
    )
    no = game.turns.get(index=1).extra["p_yes"]
    shown = (
        'No · <span class="confidence" title="how sure the judge was">'
        f"{round(100 * (1 - no))}%</span>"
    )
    assert shown in client.get(f"/games/{game.pk}/").content.decode()


def test_a_knowledge_base_answer_has_no_percentage(client, catalog, fixed_secret):
    fixed_secret("dog")
    client.post("/play/start/", {"role": "guesser", "judge": "kb"})
    game = Game.objects.get()
    panel = client.post(
        f"/play/{game.pk}/ask/",
        {"question": "Is it a kind of mammal?", "expected_index": 0},
        **HTMX,
    ).content.decode()
    assert "p_yes" not in game.turns.get().extra and 'class="confidence"' not in panel


def test_the_end_screen_compares_the_answers_with_every_cheap_judge(client, catalog, player):
    # the information-gain guesser asks about kinds and parts (the default, natural, spends its
    # last seven questions of any game on guesses, which every judge answers No for a dog)
    game, html = answer_no_then_confirm(client, player, guesser="infogain")
    assert game.guesser.name == "infogain"
    check = game.state["kb_check"]
    assert [(j["judge"], j["available"]) for j in check["judges"]] == [
        ("kb", True),
        ("pretrained", True),
        ("learned", True),
    ]
    assert check["judge"] == "kb" and all(
        {"kb", "kb_raw"} <= set(d) for d in check["disagreements"]
    )  # as before
    assert check["differences"], (
        "saying No to every question of the information-gain guesser about a dog"
    )
    for difference in check["differences"]:
        assert difference["you"] == "no" and [a["judge"] for a in difference["answers"]] == [
            "kb",
            "pretrained",
            "learned",
        ]
        learned = difference["answers"][2]
        assert learned["p_yes"] is not None and learned["said"] == (
            "yes" if learned["p_yes"] >= 0.5 else "no"
        )
        assert any(a["differs"] for a in difference["answers"])
        if learned["said"] == "yes":
            assert f"<strong>Yes</strong> ({round(100 * learned['p_yes'])}% sure)" in html
    learned_check = judge_named(check, "learned")
    assert learned_check["compared"] + learned_check["ungrounded"] == learned_check["checked"] == 3
    assert (
        'data-judge="kb"' in html
        and 'data-judge="learned"' in html
        and '<th scope="col">learned</th>' in html
    )
    trajectory = client.get(f"/games/{game.pk}/").content.decode()
    assert (
        "Human answers another judge would give differently" in trajectory
        and "learned says" in trajectory
    )
    api = APIClient()
    api.force_authenticate(player)
    state = api.get(f"/api/games/{game.pk}/").json()["kb_check"]
    assert state["differences"] == check["differences"] and state["judges"][2]["kind"] == "learned"


def test_only_active_judges_are_compared_and_an_unknown_word_is_explained(client, catalog, player):
    ModelSpec.objects.filter(name__in=("learned", "pretrained")).update(is_active=False)
    game, _ = answer_no_then_confirm(client, player, turns=1)
    assert [j["judge"] for j in game.state["kb_check"]["judges"]] == ["kb"]
    ModelSpec.objects.filter(name__in=("learned", "pretrained")).update(is_active=True)
    game, html = answer_no_then_confirm(client, player, secret="quuxblorf", turns=1)
    check = game.state["kb_check"]
    # the knowledge-base judges cannot compare; the pretrained judge reads any word, so the
    # comparison shown first is its
    assert check["available"] is True and check["judge"] == "pretrained"
    assert "not in the knowledge base" in judge_named(check, "kb")["note"]
    assert [(j["judge"], j["available"]) for j in check["judges"]] == [
        ("kb", False),
        ("pretrained", True),
        ("learned", False),
    ]
    assert html.count("not in the knowledge base") == 2
    ModelSpec.objects.filter(name__in=judge_checks.CHECK_JUDGES).delete()
    assert services.judge_check("dog", [])["note"].startswith("No knowledge-base, pretrained or")


def test_a_game_checked_before_the_learned_judge_still_shows_its_comparison(
    client, catalog, player
):
    game, _ = answer_no_then_confirm(client, player, turns=1)
    check = game.state["kb_check"]
    legacy = {
        k: check[k]
        for k in ("available", "judge", "checked", "ungrounded", "compared", "disagreements")
    }
    legacy["disagreements"] = [
        {
            "index": 0,
            "question": "Is it a kind of physical object?",
            "you": "no",
            "kb": "yes",
            "kb_raw": "isa:physical object",
        }
    ]
    Game.objects.filter(pk=game.pk).update(state={**game.state, "kb_check": legacy})
    html = client.get(f"/play/{game.pk}/").content.decode()
    assert "you said <strong>No</strong>, the knowledge base says <strong>Yes</strong>" in html
    assert "the knowledge base says Yes" in client.get(f"/games/{game.pk}/").content.decode()
    assert (
        client.get(f"/api/games/{game.pk}/").json()["kb_check"]["disagreements"][0]["kb"] == "yes"
    )


@pytest.mark.parametrize(
    "question",
    [
        "",
        "?",
        "?!?...",
        "x" * 10_000,
        "Is it\x07 an animal?",
        "Это животное?",
        "動物ですか？",
        "Is it a " + "very " * 400 + "big thing?",
        "\t\n",
        "🐶?",
    ],
)
def test_any_question_to_the_default_judge_gets_a_verdict_or_a_clear_refusal(
    catalog, fixed_secret, question
):
    """Through the API, as a guest: the default judge (pretrained) answers, or the rules call it
    invalid, or the request is refused with a message; never a server error."""
    fixed_secret("dog")
    api = APIClient()
    game = api.post("/api/games/", {"role": "guesser"}, format="json").json()
    assert game["judge"] == "pretrained"
    response = api.post(
        f"/api/games/{game['id']}/turns/",
        {"question": question, "expected_index": 0},
        format="json",
    )
    assert response.status_code in (200, 201, 400), response.content[:300]
    if response.status_code == 400:
        assert response.json()
    else:
        assert response.json()["turn"]["verdict"] in ("yes", "no", "unknown", "invalid")
