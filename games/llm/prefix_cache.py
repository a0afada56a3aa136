"""Key/value buffers for the transformers backend: preallocated per call, reusable across calls.

`BufferLayer` is a transformers cache layer that writes into one preallocated tensor instead of
concatenating at every step. `PrefixStore` remembers, for recent sequences, where their keys and
values live in those buffers (views, no copies) so a later call can start from the longest
stored prefix of its own tokens: the guesser's prompt at turn t+1 extends the one at turn t.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from transformers.cache_utils import DynamicLayer


class BufferLayer(DynamicLayer):
    """A full-attention cache layer over a `[batch, kv_heads, capacity, head_dim]` buffer."""

    def __init__(
        self,
        capacity: int,
        keys: torch.Tensor | None = None,
        values: torch.Tensor | None = None,
        length: int = 0,
    ):
        super().__init__()
        self.capacity, self.length = capacity, length
        self.kbuf, self.vbuf = keys, values
        if keys is not None:
            self._view()

    def _view(self) -> None:
        self.dtype, self.device, self.is_initialized = self.kbuf.dtype, self.kbuf.device, True
        self.keys, self.values = self.kbuf[:, :, : self.length], self.vbuf[:, :, : self.length]

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        # uninitialised: positions are written (by `update`) before they are ever read
        b, h, _, d = key_states.shape
        self.kbuf = key_states.new_empty((b, h, self.capacity, d))
        self.vbuf = value_states.new_empty((b, h, self.capacity, value_states.shape[-1]))
        self._view()

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if self.kbuf is None:
            self.lazy_initialization(key_states, value_states)
        n = key_states.shape[-2]
        if self.length + n > self.capacity:
            raise RuntimeError(f"cache buffer full ({self.capacity} positions)")
        self.kbuf[:, :, self.length : self.length + n] = key_states
        self.vbuf[:, :, self.length : self.length + n] = value_states
        self.length += n
        self._view()
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.length


@dataclass
class Entry:
    """One stored sequence: its tokens live at `segments` (in order) of row `row` of `buffers`."""

    tokens: np.ndarray
    buffers: list[tuple[torch.Tensor, torch.Tensor]]  # per layer (keys, values) batch buffers
    row: int
    segments: list[tuple[int, int]]
    used: int = 0

    def copy_prefix(
        self, n: int, out: list[tuple[torch.Tensor, torch.Tensor]], row: int, at: int
    ) -> None:
        """Write this entry's first `n` positions into `out[layer][.][row, :, at:at + n]`."""
        for (k, v), (ok, ov) in zip(self.buffers, out):
            pos, left = at, n
            for start, end in self.segments:
                take = min(left, end - start)
                if take <= 0:
                    break
                ok[row, :, pos : pos + take] = k[self.row, :, start : start + take]
                ov[row, :, pos : pos + take] = v[self.row, :, start : start + take]
                pos, left = pos + take, left - take


BLOCK = 16  # prefixes are found through hashes of whole blocks of this many tokens


_RNG = np.random.default_rng(20)
_IN_BLOCK = _RNG.integers(1, 2**63, size=BLOCK, dtype=np.uint64)
_PER_BLOCK = _RNG.integers(1, 2**63, size=1 << 12, dtype=np.uint64)


def block_hashes(tokens: Sequence[int] | np.ndarray, limit: int) -> list[int]:
    """Hashes of whole-block prefixes: hashes[j] stands for tokens[:(j+1)*BLOCK]. A random
    linear hash mod 2**64, vectorised; matches are verified against the tokens anyway."""
    global _PER_BLOCK
    blocks = min(limit, len(tokens)) // BLOCK
    if blocks == 0:
        return []
    while blocks > len(_PER_BLOCK):
        _PER_BLOCK = np.concatenate(
            [_PER_BLOCK, _RNG.integers(1, 2**63, size=len(_PER_BLOCK), dtype=np.uint64)]
        )
    grid = np.asarray(tokens[: blocks * BLOCK], dtype=np.uint64).reshape(blocks, BLOCK)
    with np.errstate(over="ignore"):
        return np.cumsum((grid * _IN_BLOCK).sum(axis=1) * _PER_BLOCK[:blocks]).tolist()


class PrefixStore:
    """Recently processed sequences, least recently used evicted first past `budget_bytes`.
    The bytes counted are the buffers the entries keep alive, each whole and once: a call's
    batch buffer is freed with the last of its rows' entries, so one finished game's entry holds
    all of it (counting stored positions instead let ended games pin many times the budget).
    Lookup walks block hashes (as vLLM's prefix caching does), then extends token by token."""

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.entries: dict[int, Entry] = {}
        self._blocks: dict[int, int] = {}  # block-chain hash -> entry key (possibly evicted since)
        self._held: dict[int, list] = {}  # id(buffers) -> [entries keeping them, their bytes]
        self._next = self._tick = self._bytes = 0

    def clear(self) -> None:
        self.entries.clear()
        self._blocks.clear()
        self._held.clear()
        self._bytes = 0

    @property
    def held_bytes(self) -> int:
        """The bytes of the buffers the entries keep alive."""
        return self._bytes

    def _drop(self, key: int) -> None:
        entry = self.entries.pop(key)
        held = self._held[id(entry.buffers)]
        held[0] -= 1
        if not held[0]:
            self._bytes -= held[1]
            del self._held[id(entry.buffers)]

    def _deepest(self, tokens: np.ndarray, limit: int) -> tuple[int, Entry | None]:
        """The entry sharing the most whole blocks with `tokens[:limit]`, and that many tokens."""
        found, length = None, 0
        for j, h in enumerate(block_hashes(tokens, limit)):
            entry = self.entries.get(self._blocks.get(h, -1))
            if entry is None:
                break
            found, length = entry, (j + 1) * BLOCK
        return length, found

    def lookup(
        self, rows: Sequence[Sequence[int]], limits: Sequence[int]
    ) -> list[tuple[int, Entry | None]]:
        """For each row, the longest stored prefix (at most `limits[i]` tokens) and its entry."""
        hits: list[tuple[int, Entry | None]] = []
        for row, limit in zip(rows, limits):
            row = np.asarray(row, dtype=np.int64)
            length, entry = self._deepest(row, limit)
            if entry is None:
                hits.append((0, None))
                continue
            end = min(limit, len(row), len(entry.tokens))
            tail = entry.tokens[length:end] == row[length:end]
            length += int(tail.size if tail.all() else tail.argmin())
            if not np.array_equal(entry.tokens[:length], row[:length]):
                hits.append((0, None))  # a hash collision
                continue
            self._tick += 1
            entry.used = self._tick
            hits.append((length, entry))
        return hits

    def add(
        self, rows: Sequence[Sequence[int]], buffers, segments: Sequence[list[tuple[int, int]]]
    ) -> None:
        """Store row i of `buffers` (its tokens at `segments[i]`); drops entries they extend. A
        buffer larger than the whole budget is not stored."""
        size = sum(k.nbytes + v.nbytes for k, v in buffers)
        if size > self.budget:
            return
        for i, (row, segs) in enumerate(zip(rows, segments)):
            tokens = np.asarray(row, dtype=np.int64)
            hashes = block_hashes(tokens, len(tokens))
            for key in {self._blocks.get(h) for h in hashes} - {
                None
            }:  # entries this row extends are redundant
                old = self.entries.get(key)
                if (
                    old is not None
                    and len(old.tokens) <= len(tokens)
                    and np.array_equal(old.tokens, tokens[: len(old.tokens)])
                ):
                    self._drop(key)
            entry = Entry(tokens, buffers, i, segs)
            held = self._held.setdefault(id(buffers), [0, size])
            if not held[0]:
                self._bytes += size
            held[0] += 1
            self._tick += 1
            entry.used = self._tick
            self.entries[self._next] = entry
            self._blocks.update((h, self._next) for h in hashes)
            self._next += 1
        while self._bytes > self.budget and self.entries:
            self._drop(min(self.entries, key=lambda k: self.entries[k].used))
        if len(self._blocks) > 4 * sum(len(e.tokens) // BLOCK + 1 for e in self.entries.values()):
            self._blocks = {
                h: k for k, e in self.entries.items() for h in block_hashes(e.tokens, len(e.tokens))
            }
