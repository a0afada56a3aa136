"""Uploaded word lists: split, normalise and de-duplicate, with a reason for every dropped entry.

Accepted: one word per line or comma/semicolon-separated; `category<TAB>word` lines (the last
column is the word; of `word;alias` names the first). Each entry is Unicode-normalised (NFKC),
lower-cased, underscores become spaces and white space is collapsed. A word is letters, joined
by single spaces, hyphens or apostrophes ("ice cream", "t-shirt", "jack-o'-lantern"), at most
MAX_WORDS words and MAX_CHARS characters. Nothing is dropped without a reason.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

MAX_WORDS = 4
MAX_CHARS = 40
WORD = re.compile(r"^[a-z]+(?:(?: |-|'|-?'-?)[a-z]+)*$")
LINES = re.compile(r"\r\n|[\n\r]")
ITEMS = re.compile(r"[,;]")

BLANK = "blank entry"
NOT_A_WORD = "not a word (letters, spaces, hyphens, apostrophes only)"
TOO_LONG = f"too long (over {MAX_WORDS} words or {MAX_CHARS} characters)"
DUPLICATE = "duplicate of an earlier entry"


@dataclass(frozen=True)
class Candidate:
    word: str
    category: str = ""
    sources: tuple[str, ...] = ()  # which lists it came from (source=word_lists)
    raw: str = ""  # the entry as given, when normalisation changed it


@dataclass
class Normalised:
    candidates: list[Candidate] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (entry as given, reason)
    changed: dict[str, int] = field(default_factory=dict)  # what normalisation did, counted
    n_entries: int = 0


def normalise_word(text: str) -> tuple[str, list[str]]:
    """The normalised form and what changed ("case", "spacing", "unicode", "accents",
    "underscores")."""
    changes = []
    nfkc = unicodedata.normalize("NFKC", text)
    if nfkc != text:
        changes.append("unicode")
    plain = "".join(c for c in unicodedata.normalize("NFKD", nfkc) if not unicodedata.combining(c))
    if plain != unicodedata.normalize("NFKD", nfkc):
        changes.append("accents")  # "café" -> "cafe", as WordNet spells it
        nfkc = unicodedata.normalize("NFC", plain)
    nfkc = nfkc.replace("\u2019", "'")
    if "_" in nfkc:
        changes.append("underscores")
        nfkc = nfkc.replace("_", " ")
    spaced = " ".join(nfkc.split())
    if spaced != nfkc:
        changes.append("spacing")
    lower = spaced.lower()
    if lower != spaced:
        changes.append("case")
    return lower, changes


def why_not_a_word(word: str) -> str | None:
    if not word:
        return BLANK
    if len(word) > MAX_CHARS or word.count(" ") >= MAX_WORDS:
        return TOO_LONG
    if not WORD.match(word):
        return NOT_A_WORD
    return None


def split_entries(text: str) -> list[str]:
    """Entries of pasted text: lines, each split at commas and semicolons unless it is a TSV line.
    Blank entries are kept (they are reported), except the empty one after a final line break."""
    lines = LINES.split(text) if text else []
    if lines and lines[-1] == "":
        lines.pop()
    return [item for line in lines for item in ([line] if "\t" in line else ITEMS.split(line))]


def normalise_entries(
    entries: list[str] | list[tuple[str, str]], *, source: str = ""
) -> Normalised:
    """Entries are raw strings (`category<TAB>word` allowed) or (word, category) pairs."""
    out = Normalised(n_entries=len(entries))
    seen: set[str] = set()
    for entry in entries:
        raw, category = (entry[0], entry[1]) if isinstance(entry, tuple) else _split_tsv(entry)
        word, changes = normalise_word(raw)
        reason = why_not_a_word(word)
        if reason is None and word in seen:
            reason = DUPLICATE
        if reason is not None:
            out.dropped.append((raw.strip() if reason != BLANK else repr(raw)[:40], reason))
            continue
        seen.add(word)
        for change in changes:
            out.changed[change] = out.changed.get(change, 0) + 1
        out.candidates.append(
            Candidate(
                word, category.strip(), (source,) if source else (), raw=raw if changes else ""
            )
        )
    return out


def _split_tsv(line: str) -> tuple[str, str]:
    """(word, category) of `category<TAB>word;alias;...` (LMRL-Gym style: the first name counts)."""
    parts = line.split("\t")
    return (parts[-1].split(";")[0], parts[-2] if len(parts) >= 2 else "")
