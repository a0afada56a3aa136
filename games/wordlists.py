"""Reading word lists: a file path or the name of a shipped list (e.g. `dbrl/paper_test`)."""

from __future__ import annotations

from pathlib import Path

from games import rules

SHIPPED_DIR = Path(__file__).resolve().parent / "data" / "wordlists"


def resolve(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.exists():
        return path
    for suffix in ("", ".txt", ".tsv"):
        shipped = SHIPPED_DIR / f"{name_or_path}{suffix}"
        if shipped.is_file():
            return shipped
    raise FileNotFoundError(
        f"no word list at {name_or_path!r} (neither a file nor a shipped list under {SHIPPED_DIR})"
    )


def parse_entry(line: str) -> tuple[str, list[str], str]:
    """(word, aliases, category) of one line: `word`, or `category<TAB>word;alias;...`
    (LMRL-Gym)."""
    parts = line.split("\t")
    category = parts[0].strip() if len(parts) > 1 else ""
    names = [rules.clean_word(n) for n in parts[-1].split(";")]
    names = [n for n in names if n]
    return (names[0] if names else "", names[1:], category)


def read_words(name_or_path: str) -> list[str]:
    """Lower-cased, de-duplicated canonical words in file order (aliases after `;` dropped)."""
    seen: dict[str, None] = {}
    for line in resolve(name_or_path).read_text(encoding="utf-8").splitlines():
        word, _, _ = parse_entry(line)
        if word:
            seen.setdefault(word, None)
    return list(seen)
