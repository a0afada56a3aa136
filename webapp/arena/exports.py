"""Battles as JSONL and Parquet (one row per battle, each side's turns nested), with a fixed
schema through webapp.core.exports like the games export."""

from __future__ import annotations

from functools import lru_cache

from webapp.arena.models import Battle, person_name
from webapp.arena.selectors import counted_battles
from webapp.core.exports import model_columns, rows_export
from webapp.play.models import Turn

TURN_FIELDS = ("index", "question", "verdict", "candidates_left", "top_candidates", "latency_ms")


@lru_cache(maxsize=1)
def schema():
    import pyarrow as pa

    time = pa.timestamp("us", tz="UTC")
    turn = pa.struct(model_columns(Turn, TURN_FIELDS))
    side = [
        ("game_id", pa.int64()),
        ("guesser", pa.string()),
        ("won", pa.bool_()),
        ("questions", pa.int64()),
        ("turns", pa.list_(turn)),
    ]
    columns = [
        ("id", pa.int64()),
        ("public_id", pa.string()),
        ("player", pa.string()),
        ("word", pa.string()),
        ("word_in_kb", pa.bool_()),
        ("word_source", pa.string()),
        ("outcome", pa.string()),
        ("counted", pa.bool_()),
        ("created_at", time),
        ("finished_at", time),
    ]
    for s in ("a", "b"):
        columns += [(f"{s}_{name}", kind) for name, kind in side]
    return pa.schema(columns)


def battle_rows(battles=None) -> list[dict]:
    """Finished battles (default: all, excluded people's marked counted false), oldest first."""
    battles = Battle.objects.exclude(outcome="") if battles is None else battles
    battles = list(battles.select_related("game_a", "game_b", "guesser_a", "guesser_b", "player"))
    counted = set(counted_battles().values_list("id", flat=True))
    game_ids = [g for b in battles for g in (b.game_a_id, b.game_b_id)]
    turns: dict[int, list[dict]] = {}
    for t in (
        Turn.objects.filter(game_id__in=game_ids)
        .order_by("game_id", "index")
        .values("game_id", *TURN_FIELDS)
    ):
        turns.setdefault(t.pop("game_id"), []).append(t)
    rows = []
    for b in sorted(battles, key=lambda b: b.pk):
        row = {
            "id": b.pk,
            "public_id": str(b.public_id),
            # as the people page names them: a guest by key, a deleted account by its number
            "player": b.player.get_username() if b.player else person_name(b.guest_key),
            "word": b.word,
            "word_in_kb": b.word_in_kb,
            "word_source": b.word_source,
            "outcome": b.outcome,
            "counted": b.pk in counted,
            "created_at": b.created_at,
            "finished_at": b.finished_at,
        }
        for s, game, spec in (("a", b.game_a, b.guesser_a), ("b", b.game_b, b.guesser_b)):
            row.update(
                {
                    f"{s}_game_id": game.pk,
                    f"{s}_guesser": spec.name,
                    f"{s}_won": game.won,
                    f"{s}_questions": game.n_turns,
                    f"{s}_turns": turns.get(game.pk, []),
                }
            )
        rows.append(row)
    return rows


def battles_export(fmt: str) -> bytes:
    """Every finished battle as JSONL or Parquet bytes."""
    return rows_export(battle_rows(), fmt, schema())
