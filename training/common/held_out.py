"""Held-out words: a job must not be measured (validated, evaluated) on words it trains on.

`check_held_out` runs in a config's checks on the lists it can read without a database (shipped
lists and files, games.wordlists); the web app's job kinds run the same comparison on stored
lists (`held_out_overlap`) before anything is queued.
"""

from __future__ import annotations

from typing import Any

from training.common.config import _check


def held_out_words(name: str, split: str = "") -> list[str] | None:
    """The words of a shipped list or file `name` (games.wordlists), or None where they cannot be
    told here: a split asked for (only the web app's lists have splits) or a name that is neither
    (a web app list: its job kind's reference checks compare the stored words)."""
    from games.wordlists import read_words

    if split:
        return None
    try:
        return read_words(name)
    except (FileNotFoundError, OSError, UnicodeDecodeError):
        return None


def held_out_overlap(train: list[str], held: list[str], train_name: str, held_name: str) -> str:
    """The refusal of a job whose training words `train` meet its held-out words `held` (words
    compared as games compare secrets, lower-cased), or "" when they do not."""
    shared = sorted(set(map(str.lower, train)) & set(map(str.lower, held)))
    if not shared:
        return ""
    shown = ", ".join(shared[:5]) + (", ..." if len(shared) > 5 else "")
    return (
        f"{train_name} and {held_name} share {len(shared)} words ({shown}): the job would be "
        f"measured on words it trains on"
    )


def check_held_out(
    config: Any,
    train: tuple[str, str],
    held: tuple[str, str],
    override: str,
    words_of: Any = held_out_words,
) -> None:
    """The word list of the field `train[0]` (split: the field `train[1]`) shares no word with
    the held-out list of `held[0]` (split `held[1]`), unless the bool field `override` is set;
    else a ValueError naming both. `words_of(name, split)` reads a list (None: it cannot be
    read here, and the check is left to the web app's reference checks)."""
    if getattr(config, override):
        return
    names = [getattr(config, field).strip() for field, _ in (train, held)]
    if not all(names):
        return
    splits = [getattr(config, split) for _, split in (train, held)]
    lists = [words_of(name, split) for name, split in zip(names, splits)]
    if any(words is None for words in lists):
        return
    message = held_out_overlap(lists[0], lists[1], train[0], held[0])
    _check(not message, f"{message} (set {override} to allow it)", held[0])
