"""Tabular exports with explicit pyarrow schemas: every Parquet file the platform writes (games,
turns, trajectories, word lists, labels, judge SFT data) goes through here, so a column's type
never depends on which rows came first. A schema's string column takes nested values (dicts,
lists) as JSON text; JSONL keeps them nested."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.http import HttpResponse

TABLE_FORMATS = ("jsonl", "parquet")  # the formats of every table export (rows_export)
# the media type of each export format, for every download the platform answers
CONTENT_TYPES = {
    "txt": "text/plain; charset=utf-8",
    "jsonl": "application/jsonl",
    "parquet": "application/vnd.apache.parquet",
}


def content_type_of(filename: str) -> str | None:
    """The media type of an export format named by `filename`'s extension; None for any other
    file (a FileResponse then guesses it from the name: JSON, gzip, ...)."""
    return CONTENT_TYPES.get(Path(filename).suffix.lstrip("."))


def download(body: bytes, filename: str) -> HttpResponse:
    """An export as an attachment named `filename`, typed by its extension."""
    content_type = content_type_of(filename) or "application/octet-stream"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def model_columns(model, lookups: Iterable[str]) -> list[tuple[str, Any]]:
    """The columns of `model.objects.values(*lookups)`, typed by the model's fields (`__` follows
    a relation and is `_` in the column's name): integers int64, floats float64, times UTC
    timestamps, booleans bool, anything else (text, UUIDs, JSON) string."""
    import pyarrow as pa

    kinds = {
        "IntegerField": pa.int64(),  # every size, signed or not, and the automatic ids
        "FloatField": pa.float64(),
        "DateTimeField": pa.timestamp("us", tz="UTC"),
        "BooleanField": pa.bool_(),
    }
    columns = []
    for lookup in lookups:
        *path, name = lookup.split("__")
        owner = model
        for step in path:
            owner = owner._meta.get_field(step).related_model
        field = owner._meta.get_field(name)
        internal = (field.target_field if field.is_relation else field).get_internal_type()
        if internal.endswith(("IntegerField", "AutoField")):
            internal = "IntegerField"
        columns.append((lookup.replace("__", "_"), kinds.get(internal, pa.string())))
    return columns


def _cell(value: Any, kind) -> Any:
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=False, default=str)
        return (
            value
            if isinstance(value, str)
            else (value.isoformat() if hasattr(value, "isoformat") else str(value))
        )
    if pa.types.is_struct(kind):
        return {f.name: _cell(value.get(f.name), f.type) for f in kind}
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return [_cell(v, kind.value_type) for v in value]
    return value


def rows_table(rows: Iterable[dict], schema):
    """A pyarrow Table of `rows` in `schema`: missing keys are null, nested values in string
    columns JSON text, extra keys ignored."""
    import pyarrow as pa

    prepared = [{f.name: _cell(row.get(f.name), f.type) for f in schema} for row in rows]
    return pa.Table.from_pylist(prepared, schema=schema)


def parquet_bytes(rows: Iterable[dict], schema) -> bytes:
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(rows_table(rows, schema), buffer)
    return buffer.getvalue()


def _plain(value: Any) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)  # datetimes, UUIDs


def jsonl_line(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False, default=_plain) + "\n"


def jsonl_bytes(rows: Iterable[dict]) -> bytes:
    return "".join(jsonl_line(r) for r in rows).encode()


def rows_export(rows: list[dict], fmt: str, schema) -> bytes:
    """`rows` as JSONL, or as Parquet in `schema`."""
    if fmt == "jsonl":
        return jsonl_bytes(rows)
    if fmt == "parquet":
        return parquet_bytes(rows, schema)
    raise ValueError(f"unknown export format {fmt!r}: use {' or '.join(TABLE_FORMATS)}")


class ChunkedWriter:
    """Appends chunks of rows to `<name>.jsonl` and `<name>.parquet` (one row group per chunk, the
    schema fixed from the start), holding one chunk in memory at a time."""

    def __init__(self, out_dir: Path, schemas: dict[str, Any], formats: Iterable[str]):
        self.out_dir, self.schemas, self.formats = Path(out_dir), schemas, set(formats)
        self.jsonl: dict[str, Any] = {}
        self.parquet: dict[str, Any] = {}

    def write(self, name: str, rows: list[dict]) -> None:
        if "jsonl" in self.formats:
            if name not in self.jsonl:
                # kept open across write() calls, one chunk at a time; close() closes it
                self.jsonl[name] = open(  # noqa: SIM115
                    self.out_dir / f"{name}.jsonl", "w", encoding="utf-8"
                )
            self.jsonl[name].writelines(jsonl_line(r) for r in rows)
        if "parquet" in self.formats:
            import pyarrow.parquet as pq

            if name not in self.parquet:
                self.parquet[name] = pq.ParquetWriter(
                    self.out_dir / f"{name}.parquet", self.schemas[name]
                )
            if rows:
                self.parquet[name].write_table(rows_table(rows, self.schemas[name]))

    def close(self) -> list[Path]:
        for handle in [*self.jsonl.values(), *self.parquet.values()]:
            handle.close()
        return sorted(p for p in self.out_dir.iterdir() if p.suffix in (".jsonl", ".parquet"))
