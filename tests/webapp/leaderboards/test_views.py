"""The leaderboard page (guests may browse; names are escaped) and the researchers' recompute
button."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.sending import tasks_held
from webapp.leaderboards.models_board import models_key
from webapp.leaderboards.services import leaderboards_refresh

pytestmark = pytest.mark.django_db
REFRESH = "leaderboards.refresh"  # the task's name: webapp.core.sending sends it by name
URL = "/leaderboards/"
EVIL = "<script>alert(1)</script>"


@pytest.fixture
def boards(spec, word_list, make_game):
    evil_user = get_user_model().objects.create_user(username=EVIL, password="a-long-test-password")
    kb = spec("kb", role="judge", kind="kb")
    evil_model = spec('<img src=x onerror="alert(2)">')
    plain = spec("plain-model")
    for i in range(3):
        make_game(f"w{i}", True, 7, mode="human_guesser", player=evil_user, judge=kb)
        make_game(f"w{i}", i > 0, 9, guesser=evil_model, judge=kb, word_list=word_list)
        make_game(f"w{i}", False, 20, guesser=plain, judge=kb, word_list=word_list)
    make_game("w0", True, 30, max_turns=50, guesser=plain, judge=kb, word_list=word_list)
    leaderboards_refresh()
    return {"kb": kb, "word_list": word_list, "plain": plain}


def test_guest_sees_all_three_boards_with_headers_and_escaped_names(client, boards):
    response = client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    for header in (
        "Success, mean@k (%)",
        "pass@k (%)",
        "Mean turns (won)",
        "Win rate (%)",
        "Ability θ",
        "Mean questions (won games)",
        "95% interval",
    ):
        assert header in html
    assert (
        'id="models-table"' in html and 'id="humans-table"' in html and 'id="ability-table"' in html
    )
    assert "test/words v2 · judge kb · 20 turns" in html
    assert (
        "reference rule (the board's)" in html and "<small>strict rule</small>" in html
    )  # both rules' success
    assert "preliminary" in html and "fewer than 200 games" in html
    # names are text, never markup: in the tables and in the chart data
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert EVIL not in html
    assert '<img src=x onerror="alert(2)">' not in html
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html
    assert (
        'id="ability-data"' in html and "chart.umd.min.js" in html and 'id="ability-chart"' in html
    )
    # guests get no recompute button, and the nav links the page
    assert "Recompute now" not in html
    assert 'href="/leaderboards/"' in html


def test_models_key_selector_switches_board_and_htmx_gets_only_the_table(client, boards):
    other = models_key(boards["word_list"].pk, boards["kb"].pk, 50)
    html = client.get(URL, {"key": other}).content.decode()
    assert f'<option value="{other}" selected>' in html
    assert "test/words v2 · judge kb · 50 turns · reference rule</caption>" in html

    partial = client.get(
        URL, {"key": other, "board": "models"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert partial.lstrip().startswith('<div id="models-board">')
    assert "<html" not in partial and "50 turns · reference rule</caption>" in partial

    missing = client.get(URL, {"key": "wl:999|judge:-|turns:20"}).content.decode()
    assert "does not exist" in missing and "20 turns · reference rule</caption>" in missing


def test_page_renders_before_anything_was_computed(client, db):
    html = client.get(URL).content.decode()
    assert "Not computed yet" in html and "No finished model-vs-model games yet" in html
    assert "chart.umd.min.js" not in html


def test_recompute_is_refused_to_guests_and_non_researchers(client, make_user):
    with tasks_held() as send:
        assert client.post(f"{URL}recompute/").status_code == 403
        client.force_login(make_user("player", "annotator"))
        assert client.post(f"{URL}recompute/").status_code == 403
    send.assert_not_called()


def test_recompute_queues_the_task_for_a_researcher_after_commit(
    client, researcher, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    assert "Recompute now" in client.get(URL).content.decode()
    with tasks_held() as send:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = client.post(f"{URL}recompute/")
            send.assert_not_called()  # only once the request's transaction commits
        for callback in callbacks:
            callback()
    assert response.status_code == 302 and response["Location"] == URL
    send.assert_called_once_with(REFRESH)
    assert "Recompute queued" in client.get(URL).content.decode()
    assert client.get(f"{URL}recompute/").status_code == 405


def test_recompute_needs_the_csrf_token(researcher):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    with tasks_held():
        assert client.post(f"{URL}recompute/").status_code == 403
        page = client.get(URL)
        token = page.cookies["csrftoken"].value
        assert client.post(f"{URL}recompute/", {"csrfmiddlewaretoken": token}).status_code == 302
    assert 'name="csrfmiddlewaretoken"' in page.content.decode()


def test_recompute_clicks_queue_one_refresh_until_a_worker_starts_it(
    client, researcher, django_capture_on_commit_callbacks
):
    """40 clicks queued 40 refreshes in front of the reaper (issue 34 item 28): now one waits."""
    from workers.tasks import leaderboards_refresh_task

    client.force_login(researcher)
    with tasks_held() as send:
        with django_capture_on_commit_callbacks(execute=True):
            for _ in range(40):
                client.post(f"{URL}recompute/")
        assert send.call_args_list == [mock.call(REFRESH)]
        assert "already queued" in client.get(URL).content.decode()
        leaderboards_refresh_task.apply()  # the worker starts it: the next click queues again
        with django_capture_on_commit_callbacks(execute=True):
            client.post(f"{URL}recompute/")
            client.post(f"{URL}recompute/")
        assert send.call_args_list == [mock.call(REFRESH)] * 2


def test_a_refresh_mark_left_by_a_lost_message_expires(django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from webapp.leaderboards import services

    now = timezone.now()
    with tasks_held() as send:
        with django_capture_on_commit_callbacks(execute=True):
            assert services.leaderboards_refresh_queue(now=now) is True
            assert services.leaderboards_refresh_queue(now=now + timedelta(seconds=30)) is False
            later = now + timedelta(seconds=services.REFRESH_PENDING_SECONDS + 1)
            assert services.leaderboards_refresh_queue(now=later) is True  # taken to be lost
        assert send.call_args_list == [mock.call(REFRESH)] * 2
