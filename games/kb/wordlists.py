"""The shipped benchmark lists as the knowledge base uses them (see games.wordlists)."""

from __future__ import annotations

from games import text as gametext
from games.wordlists import SHIPPED_DIR, read_words


def dbrl_words(name: str) -> list[str]:
    """Words of dbrl/<name>.txt (e.g. "solved", "paper_test"), lower-cased, in file order."""
    return read_words(f"dbrl/{name}")


def dbrl_list_names() -> list[str]:
    return sorted(p.stem for p in (SHIPPED_DIR / "dbrl").glob("*.txt"))


def lmrl_objects() -> list[list[str]]:
    """LMRL-Gym objects, each a list of accepted names ("Airplane;Plane"), the first canonical."""
    out = []
    for line in (SHIPPED_DIR / "lmrl" / "objects.tsv").read_text(encoding="utf-8").splitlines():
        if "\t" in line:
            names = line.split("\t", 1)[1]
            out.append([gametext.clean_word(n) for n in names.split(";") if n.strip()])
    return out
