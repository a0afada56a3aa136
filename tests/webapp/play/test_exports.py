"""Exports over several chunks of mixed games: a human game first (no guesser, no initial belief)
then model games (no player). The schema is fixed, so no column is typed by the first chunk."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from tests.webapp.play.support import model_game
from webapp.catalog.models import ModelSpec
from webapp.play.exports import export_games
from webapp.play.models import Game, GameMode, GameOutcome, Turn

pytestmark = pytest.mark.django_db


def _human_game(player) -> Game:
    game = Game.objects.create(
        mode=GameMode.HUMAN_GUESSER,
        secret="dog",
        player=player,
        judge=ModelSpec.objects.get(name="kb"),
        outcome=GameOutcome.WON,
        n_turns=1,
        finished_at=timezone.now(),
        config={"max_turns": 20},
    )
    Turn.objects.create(
        game=game,
        index=0,
        question="Is it a dog?",
        verdict="finished",
        reward={"win": 1.0},
        total_reward=1.0,
    )
    return game


@pytest.fixture
def mixed_games(catalog):
    player = get_user_model().objects.create_user("ada", password="x")
    human = _human_game(player)
    models = [
        model_game(secret, ["Is it an animal?", "Is it alive?", f"Is it a {secret}?"])
        for secret in ("cat", "apple", "table")
    ]
    return [human, *models]


def test_games_turns_and_trajectories_over_several_chunks_keep_one_schema(mixed_games, tmp_path):
    import pyarrow.parquet as pq

    ids = [g.pk for g in mixed_games]
    chunks = []
    n_turns, files = export_games(
        ids, tmp_path, ["jsonl", "parquet"], chunk=1, on_chunk=chunks.append
    )
    assert chunks == [1, 2, 3, 4]
    assert sorted(p.name for p in files) == sorted(
        f"{n}.{x}" for n in ("games", "turns", "trajectories") for x in ("jsonl", "parquet")
    )
    games = pq.read_table(tmp_path / "games.parquet").to_pylist()
    assert [g["id"] for g in games] == ids
    assert games[0]["guesser_name"] is None and games[0]["player_username"] == "ada"
    assert games[0]["initial_belief"] is None and json.loads(games[0]["config"]) == {
        "max_turns": 20
    }
    assert games[1]["guesser_name"] == "infogain" and games[1]["player_username"] is None
    assert games[1]["initial_belief"] == -6.0 and games[1]["finished_at"] is not None

    turns = pq.read_table(tmp_path / "turns.parquet").to_pylist()
    assert len(turns) == n_turns == 1 + sum(g.n_turns for g in mixed_games[1:])
    assert turns[0]["top_candidates"] is None and json.loads(turns[0]["reward"]) == {"win": 1.0}
    later = next(t for t in turns if t["game_id"] == ids[1] and t["index"] == 0)
    assert json.loads(later["top_candidates"])[0][0] == "cat" and later["candidates_left"] == 100

    trajectories = pq.read_table(tmp_path / "trajectories.parquet").to_pylist()
    assert [len(t["turns"]) for t in trajectories] == [g.n_turns for g in mixed_games]
    assert trajectories[0]["turns"][0]["question"] == "Is it a dog?"
    assert trajectories[1]["turns"][0]["belief"] == -5.0

    lines = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert first["config"] == {"max_turns": 20} and first["turns"][0]["reward"] == {"win": 1.0}
    assert first["created_at"].endswith("+00:00")  # ISO 8601 with the zone


def test_trajectories_load_with_datasets(mixed_games, tmp_path):
    import datasets

    export_games([g.pk for g in mixed_games], tmp_path, ["parquet"], chunk=2)
    loaded = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "trajectories.parquet"), split="train"
    )
    assert loaded["secret"] == [g.secret for g in mixed_games]
    assert [t["question"] for t in loaded[1]["turns"]][:2] == ["Is it an animal?", "Is it alive?"]


def test_an_empty_selection_still_writes_files_with_the_schema(tmp_path):
    import pyarrow.parquet as pq

    n_turns, files = export_games([], tmp_path, ["parquet"])
    assert n_turns == 0 and len(files) == 3
    table = pq.read_table(tmp_path / "trajectories.parquet")
    assert table.num_rows == 0 and "turns" in table.column_names
