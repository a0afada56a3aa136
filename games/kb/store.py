"""The knowledge-base data file: a deterministic .npz of plain arrays (no pickle).

Value kinds, by how the builder hands them over:
- list of str      -> one UTF-8 byte array, items joined by newlines   (`<name>` as `s:<name>`)
- list of int lists -> row pointers + delta-coded sorted values        (`r:<name>`, `r:<name>.ptr`)
- dict str -> str  -> two string lists                                 (`d:<name>.keys` / `.values`)
- numpy array      -> as is                                            (`a:<name>`)
- "meta" dict      -> JSON bytes                                       (`meta`)
Row values are stored as differences from the previous value in the row (sorted rows compress
several times better that way); the first value of a row is stored as is.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # zip timestamps fixed so the same build gives the same bytes


def _strings(items: list[str]) -> np.ndarray:
    text = "\n".join(items)
    if any("\n" in item for item in items):
        raise ValueError("strings stored in the knowledge base cannot contain newlines")
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def _rows(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(r) for r in rows])
    flat = np.fromiter((v for r in rows for v in r), dtype=np.int64, count=int(ptr[-1]))
    deltas = flat.copy()
    deltas[1:] -= flat[:-1]
    starts = ptr[:-1][np.diff(ptr) > 0]
    deltas[starts] = flat[starts]
    return ptr.astype(np.int32), deltas.astype(np.int32)


def encode(payload: dict[str, Any]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for name, value in payload.items():
        if name == "meta":
            arrays["meta"] = np.frombuffer(
                json.dumps(value, sort_keys=True).encode(), dtype=np.uint8
            )
        elif isinstance(value, np.ndarray):
            arrays[f"a:{name}"] = value
        elif isinstance(value, dict):
            arrays[f"d:{name}.keys"] = _strings(list(value))
            arrays[f"d:{name}.values"] = _strings(list(value.values()))
        elif value and isinstance(value[0], str):
            arrays[f"s:{name}"] = _strings(value)
        else:
            arrays[f"r:{name}.ptr"], arrays[f"r:{name}"] = _rows(value)
    return arrays


def write(payload: dict[str, Any], path: Path) -> int:
    """Write the payload; returns the file size in bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, array in sorted(encode(payload).items()):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buffer.getvalue(), compresslevel=9)
    tmp.replace(path)
    return path.stat().st_size


class Rows:
    """Ragged integer rows: `rows[i]` is a numpy array (a view into one flat array)."""

    def __init__(self, ptr: np.ndarray, flat: np.ndarray):
        self.ptr = ptr.astype(np.int64)
        self.flat = flat

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        return self.flat[self.ptr[i] : self.ptr[i + 1]]


def _decode_rows(ptr: np.ndarray, deltas: np.ndarray) -> Rows:
    total = np.cumsum(deltas.astype(np.int64))
    lengths = np.diff(ptr.astype(np.int64))
    before = np.concatenate([[0], total])[ptr[:-1]]  # running sum before each row starts
    flat = total - np.repeat(before, lengths)
    return Rows(ptr, flat.astype(np.int32))


def _decode_strings(array: np.ndarray) -> list[str]:
    return array.tobytes().decode("utf-8").split("\n") if array.size else []


def read(path: Path) -> dict[str, Any]:
    """The payload back: lists of str, Rows, dicts, arrays and the meta dict."""
    out: dict[str, Any] = {}
    with np.load(path, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    for name, array in arrays.items():
        kind, _, rest = name.partition(":")
        if name == "meta":
            out["meta"] = json.loads(array.tobytes().decode())
        elif kind == "a":
            out[rest] = array
        elif kind == "s":
            out[rest] = _decode_strings(array)
        elif kind == "d" and rest.endswith(".keys"):
            base = rest[: -len(".keys")]
            values = _decode_strings(arrays[f"d:{base}.values"])
            out[base] = dict(zip(_decode_strings(array), values))
        elif kind == "r" and not rest.endswith(".ptr"):
            out[rest] = _decode_rows(arrays[f"r:{rest}.ptr"], array)
    return out
