"""Word-list exports: plain text (one word per line), JSONL and Parquet (loadable with `datasets`).

Every row has the same columns: word, split, category, difficulty, solve_rate, mean_questions,
subsets (a list of names) and stats (a JSON string in Parquet, where per-word keys vary; an
object in JSONL), plus the list's name and version so a file explains itself.
"""

from __future__ import annotations

import re

from webapp.catalog.models import WordList
from webapp.core.exports import jsonl_bytes, parquet_bytes

FORMATS = ("txt", "jsonl", "parquet")


def export_filename(word_list: WordList, fmt: str, suffix: str = "") -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{word_list.name}-v{word_list.version}{suffix}")
    return f"{stem}.{fmt}"


def export_bytes(word_list: WordList, rows: list[dict], fmt: str) -> bytes:
    if fmt == "txt":
        return "".join(r["word"] + "\n" for r in rows).encode("utf-8")
    rows = [{"list": word_list.name, "version": word_list.version, **r} for r in rows]
    if fmt == "jsonl":
        return jsonl_bytes(rows)
    if fmt == "parquet":
        import pyarrow as pa

        schema = pa.schema(
            [
                ("list", pa.string()),
                ("version", pa.int64()),
                ("word", pa.string()),
                ("split", pa.string()),
                ("category", pa.string()),
                ("difficulty", pa.float64()),
                ("solve_rate", pa.float64()),
                ("mean_questions", pa.float64()),
                ("subsets", pa.list_(pa.string())),
                ("stats", pa.string()),
            ]
        )
        return parquet_bytes(rows, schema)  # stats: JSON text
    raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
