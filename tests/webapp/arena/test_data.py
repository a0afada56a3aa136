"""Arena data: the battles export (JSONL, Parquet) and the "arena words" word list."""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from tests.webapp.arena.support import STRONG, WEAK, stored_battle
from webapp.arena import board, exports, services
from webapp.arena.models import Battle
from webapp.catalog.selectors import word_list_latest
from webapp.play.models import Turn

pytestmark = pytest.mark.django_db


def test_the_export_has_one_row_per_finished_battle_with_each_sides_turns(arena):
    ada = get_user_model().objects.create_user("ada", password="pw-ada-123456")
    counted = stored_battle(STRONG, WEAK, "a")
    Turn.objects.create(
        game=counted.game_a,
        index=0,
        question="Is it a dog?",
        verdict="finished",
        top_candidates=[["dog", 0.9]],
    )
    stored_battle(WEAK, STRONG, "tie", player=ada)
    stored_battle(STRONG, WEAK, "")  # unfinished: not exported
    services.person_exclude(by=None, user=ada)
    lines = exports.battles_export("jsonl").decode().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["outcome"] for r in rows] == ["a", "tie"]
    assert [r["counted"] for r in rows] == [True, False]
    assert [r["player"] for r in rows] == ["guest", "ada"]  # a guest with no key stored
    ada_id = ada.pk
    ada.delete()  # her battle stays, and stays apart from the guests'
    assert json.loads(exports.battles_export("jsonl").decode().splitlines()[1])["player"] == (
        f"deleted account {ada_id}"
    )
    assert rows[0]["a_guesser"] == STRONG and rows[0]["a_turns"][0]["question"] == "Is it a dog?"
    table = pq.read_table(io.BytesIO(exports.battles_export("parquet")))
    assert table.num_rows == 2 and table.column("b_guesser").to_pylist() == [WEAK, STRONG]
    assert json.loads(table.column("a_turns").to_pylist()[0][0]["top_candidates"]) == [["dog", 0.9]]


def test_export_views_are_for_researchers(client, arena):
    user = get_user_model().objects.create_user("rita", password="pw-rita-123456")
    client.force_login(user)
    assert client.get("/arena/export/battles.jsonl").status_code == 403
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    stored_battle(STRONG, WEAK, "b")
    response = client.get("/arena/export/battles.jsonl")
    assert response.status_code == 200 and b'"outcome": "b"' in response.content
    assert response["Content-Type"] == "application/jsonl"  # as every JSONL download
    parquet = client.get("/arena/export/battles.parquet")
    assert parquet["Content-Type"] == "application/vnd.apache.parquet"
    assert parquet["Content-Disposition"] == 'attachment; filename="arena-battles.parquet"'


def test_arena_words_get_a_new_version_only_when_there_are_new_words(arena):
    stored_battle(STRONG, WEAK, "a")
    Battle.objects.update(word="teapot")
    stored_battle(STRONG, WEAK, "tie")
    Battle.objects.filter(word="dog").update(word="zorblax", word_in_kb=False)
    first = board.arena_words_refresh()
    rows = {e.word.text: e.stats for e in first.entries.select_related("word")}
    assert first.version == 1 and rows["zorblax"]["in_kb"] is False
    assert rows["teapot"] == {"in_kb": True, "battles": 1}
    assert board.arena_words_refresh() is None  # nothing new
    stored_battle(STRONG, WEAK, "b")  # "dog": a new word
    assert board.arena_words_refresh().version == 2
    assert word_list_latest(board.ARENA_WORDS).entries.count() == 3


def test_arena_words_leave_out_words_drawn_from_a_word_list(arena):
    stored_battle(STRONG, WEAK, "a")  # "dog", kept by the person
    drawn = stored_battle(STRONG, WEAK, "tie")
    Battle.objects.filter(pk=drawn.pk).update(word="teapot", word_source="word_list")
    words = board.arena_words_refresh().entries.values_list("word__text", flat=True)
    assert list(words) == ["dog"]  # a word drawn from a list was not chosen by anyone
