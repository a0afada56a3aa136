"""Loading a data file once per process (the knowledge base, the learned judge's weights)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def once_per_path(default: Path) -> Callable[[Callable[[Path], T]], Callable[..., T]]:
    """Decorate `load(path)` so that it runs once per process and resolved path (`default` when
    the caller gives none), under a lock: concurrent first calls load once and every caller
    gets the same object."""

    def decorate(load: Callable[[Path], T]) -> Callable[..., T]:
        loaded: dict[Path, T] = {}
        lock = threading.Lock()

        @functools.wraps(load)
        def load_once(path: str | Path | None = None) -> T:
            key = Path(path or default).resolve()
            with lock:
                if key not in loaded:
                    loaded[key] = load(key)
                return loaded[key]

        return load_once

    return decorate
