"""Reading word lists: a file path or the name of a shipped list (e.g. `dbrl/paper_test`)."""

from __future__ import annotations

from pathlib import Path

SHIPPED_DIR = Path(__file__).resolve().parent / "data" / "wordlists"


def resolve(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.exists():
        return path
    for suffix in ("", ".txt", ".tsv"):
        shipped = SHIPPED_DIR / f"{name_or_path}{suffix}"
        if shipped.is_file():
            return shipped
    raise FileNotFoundError(f"no word list at {name_or_path!r} (neither a file nor a shipped list under {SHIPPED_DIR})")


def read_words(name_or_path: str) -> list[str]:
    """Lower-cased, de-duplicated words in file order; a TSV's last column is the word."""
    seen: dict[str, None] = {}
    for line in resolve(name_or_path).read_text(encoding="utf-8").splitlines():
        word = " ".join(line.split("\t")[-1].lower().split())
        if word:
            seen.setdefault(word, None)
    return list(seen)
