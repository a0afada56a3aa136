"""The curation funnel: per stage how many words went in and out, and why the rest were dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

N_EXAMPLES = 5


@dataclass
class Stage:
    name: str
    n_in: int
    kept: list = field(default_factory=list)
    dropped: dict[str, list[str]] = field(default_factory=dict)  # reason -> words (as given)
    detail: dict[str, Any] = field(default_factory=dict)

    def drop(self, word: str, reason: str) -> None:
        self.dropped.setdefault(reason, []).append(word)

    @property
    def n_dropped(self) -> int:
        return sum(len(v) for v in self.dropped.values())

    def check(self) -> None:
        """Every word that went in came out or was dropped with a reason."""
        if self.n_in != len(self.kept) + self.n_dropped:
            raise AssertionError(
                f"stage {self.name}: {self.n_in} in != {len(self.kept)} out + "
                f"{self.n_dropped} dropped"
            )

    def to_dict(self) -> dict[str, Any]:
        self.check()
        reasons = sorted(self.dropped, key=lambda r: (-len(self.dropped[r]), r))
        return {
            "stage": self.name,
            "in": self.n_in,
            "out": len(self.kept),
            "dropped": {r: len(self.dropped[r]) for r in reasons},
            "examples": {r: self.dropped[r][:N_EXAMPLES] for r in reasons},
            **({"detail": self.detail} if self.detail else {}),
        }


def log_drops(stage: Stage, log, max_chars: int = 9000) -> None:
    """Every dropped word, one log message per reason (split when long): nothing disappears
    silently."""
    for reason, words in stage.dropped.items():
        head = f"{stage.name}: dropped {len(words)} ({reason}): "
        chunk: list[str] = []
        size = len(head)
        for word in words:
            if chunk and size + len(word) + 2 > max_chars:
                log(head + ", ".join(chunk), "warning")
                chunk, size = [], len(head)
            chunk.append(word)
            size += len(word) + 2
        if chunk:
            log(head + ", ".join(chunk), "warning")
