"""webapp.core.exports.model_columns: Parquet column types read from the model's fields."""

from __future__ import annotations

import pyarrow as pa

from webapp.arena.models import Battle
from webapp.core.exports import model_columns
from webapp.play.models import Game, Turn


def test_columns_take_their_types_from_the_model_fields_and_follow_relations():
    columns = dict(
        model_columns(
            Game,
            ("id", "public_id", "word_list__version", "job_id", "initial_belief", "created_at"),
        )
    )
    assert columns == {
        "id": pa.int64(),  # an automatic id
        "public_id": pa.string(),  # a UUID
        "word_list_version": pa.int64(),  # through the relation, named with "_"
        "job_id": pa.int64(),  # a foreign key: its target's type
        "initial_belief": pa.float64(),
        "created_at": pa.timestamp("us", tz="UTC"),
    }
    assert dict(model_columns(Turn, ("reward", "question"))) == {
        "reward": pa.string(),  # JSON as text
        "question": pa.string(),
    }
    assert model_columns(Battle, ("word_in_kb", "abandoned")) == [
        ("word_in_kb", pa.bool_()),
        ("abandoned", pa.bool_()),
    ]
