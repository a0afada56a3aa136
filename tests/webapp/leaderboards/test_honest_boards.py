"""Issue 22: only finished evaluations feed the boards and the ability scale; the people's board
is strict; every board states its rule, k and word list; names link to their pages."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from webapp.jobs.models import Job
from webapp.leaderboards.selectors import leaderboard_latest
from webapp.leaderboards.services import leaderboards_refresh

from .test_services import _won_by

pytestmark = pytest.mark.django_db


@pytest.fixture
def jobs_of_every_status(spec, word_list, make_game):
    kb = spec("kb", role="judge", kind="kb")
    jobs = {
        s: Job.objects.create(kind="evaluation", status=s)
        for s in ("finished", "stopped", "running", "failed")
    }
    for status, job in jobs.items():
        guesser = spec(f"from-{status}")
        for i in range(4):
            make_game(f"w{i}", True, 5, guesser=guesser, judge=kb, word_list=word_list, job=job)
    return jobs


def test_only_finished_evaluations_feed_the_models_board_and_the_ability_scale(
    jobs_of_every_status,
):
    leaderboards_refresh()
    assert [r["name"] for r in leaderboard_latest("models").rows] == ["from-finished"]
    assert [r["name"] for r in leaderboard_latest("ability").rows] == ["from-finished"]
    assert leaderboard_latest("ability").meta["responses"] == 4

    # the evaluation runner refreshes just before its job is marked finished: its games count
    leaderboards_refresh(finishing_jobs=[jobs_of_every_status["running"].pk])
    assert {r["name"] for r in leaderboard_latest("models").rows} == {
        "from-finished",
        "from-running",
    }


def test_the_people_board_counts_strict_games_only_and_names_its_word_lists(
    make_game, spec, word_list
):
    cheat, honest = (
        get_user_model().objects.create_user(username=n, password="a-long-test-password")
        for n in ("cheat", "honest")
    )
    for i in range(6):  # won under the reference rule by listing many words: not on the board
        make_game(f"w{i}", True, 2, mode="human_guesser", player=cheat, config={"max_turns": 20})
    make_game("w0", True, 8, mode="human_guesser", player=honest, word_list=word_list)
    make_game("w1", False, 20, mode="human_guesser", player=honest, word_list=word_list)
    leaderboards_refresh()
    humans = leaderboard_latest("humans")
    assert [(r["name"], r["games"], r["wins"]) for r in humans.rows] == [("honest", 2, 1)]
    assert humans.meta["win_rule"] == "strict"
    assert humans.meta["word_lists"] == [
        {"key": f"wl:{word_list.pk}", "name": "test/words", "version": 2, "games": 2, "players": 1}
    ]
    assert [r["name"] for r in leaderboard_latest("ability").rows] == ["honest"]


def test_the_ability_scale_counts_a_model_win_only_under_the_strict_rule(
    spec, word_list, make_game
):
    kb, mentions = spec("kb", role="judge", kind="kb"), spec("mentions")
    common = {"guesser": mentions, "judge": kb, "word_list": word_list}
    _won_by(
        make_game, "jacket", "Is it related to jacket?", **common
    )  # a mention: a loss under strict
    _won_by(make_game, "city", "Is it a city?", **common)
    leaderboards_refresh()
    (row,) = leaderboard_latest("ability").rows
    assert (row["games"], row["wins"]) == (2, 1) and leaderboard_latest("ability").meta[
        "win_rule"
    ] == "strict"
    assert (
        leaderboard_latest("models").rows[0]["wins"] == 2
    )  # the reference board keeps its own rule


def test_boards_state_rule_k_and_word_list_and_link_names(
    client, jobs_of_every_status, make_game, word_list
):
    person = get_user_model().objects.create_user(username="ann", password="a-long-test-password")
    make_game("w0", True, 6, mode="human_guesser", player=person, word_list=word_list)
    leaderboards_refresh()
    html = client.get("/leaderboards/").content.decode()
    assert (
        'id="models-facts"><strong>Rule:</strong> reference' in html
        and "<strong>k</strong> = 1 ·" in html
    )
    assert f'href="/lists/{word_list.pk}/">test/words v2</a>' in html
    assert 'href="/games/?mode=model&amp;guesser=from-finished">from-finished</a>' in html
    assert html.count('href="/players/ann/">ann</a>') == 2  # on the ability and the people boards
    assert (
        'id="humans-facts"><strong>Rule:</strong> strict' in html
        and "test/words v2\n    (1 game)" in html
    )
    assert 'id="ability-facts"><strong>Rule:</strong> strict' in html
    assert "Win chance is not success rate." in html
    assert "from-stopped" not in html and "from-running" not in html


def test_a_stopped_evaluation_shows_its_partial_results_on_its_run_page(
    client, researcher, spec, word_list, make_game
):
    kb, guesser = spec("kb", role="judge", kind="kb"), spec("quitter")
    job = Job.objects.create(
        kind="evaluation", status="stopped", progress=0.25, config={"samples": 8}
    )
    for i, won in enumerate([True, True, False]):
        make_game(f"w{i}", won, 6, guesser=guesser, judge=kb, word_list=word_list, job=job)
    client.force_login(researcher)
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert 'id="partial-results"' in html and "stopped, partial" in html
    assert "stopped after 3 games (25% of" in html and "with k = 1" in html
    assert "<td>66.7% [" in html  # success over the games it played, with its interval
    leaderboards_refresh()
    assert leaderboard_latest("models") is None  # and none of it reaches a board
    Job.objects.filter(pk=job.pk).update(status="finished")
    assert 'id="partial-results"' not in client.get(f"/jobs/{job.pk}/").content.decode()
