"""Text helpers the rules, the knowledge base and the judges share: normalisation, words,
plural and singular forms, and whether a text names a word.

Standard library only: games.kb reads its words through this module, and games.rules (whose
strict rule reads the knowledge base) re-exports every name here, so neither imports the other.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
_STOP = {"a", "an", "the", "it", "is", "are", "does", "do", "can", "could", "would", "was", "your"}
_VOWELS = set("aeiou")


def clean_text(text: str) -> str:
    """Unicode-normalise, drop control characters and collapse white space."""
    text = unicodedata.normalize("NFKC", text)
    if not (text.isascii() and text.isprintable()):  # the common case needs no pass per character
        text = "".join(ch if ch.isprintable() or ch in " \t\n" else " " for ch in text)
    return " ".join(text.split())


def clean_word(text: str) -> str:
    """The form a secret or a word-list word is stored and compared in: clean_text, lower case."""
    return clean_text(text).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(clean_text(text).lower().replace("’", "'"))


def normalise_question(question: str) -> str:
    """A key under which two phrasings of the same question collide (for `repeated`)."""
    return " ".join(words(question))


def plural(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in _VOWELS:
        return word[:-1] + "ies"
    return word + "s"


def singular_forms(word: str) -> tuple[str, ...]:
    """Plausible singulars of a (possibly plural) word, most likely first ("glasses" -> glass)."""
    forms = []
    if word.endswith("ies") and len(word) > 4:
        forms.append(word[:-3] + "y")
    if word.endswith("ves") and len(word) > 4:
        forms += [word[:-3] + "f", word[:-3] + "fe"]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 2:
        forms.append(word[:-1])
    if word.endswith("es") and len(word) > 3:
        forms.append(word[:-2])
    return tuple(forms)


def singulars(word: str) -> set[str]:
    """Every plausible singular of a (possibly plural) word, the word itself included."""
    return {word, *singular_forms(word)}


def secret_variants(secret: str) -> set[str]:
    """Surface forms of the secret: itself, plural and singular forms."""
    base = " ".join(words(secret))
    if not base:
        return set()
    *head, last = base.split(" ")
    lasts = singulars(last) | {plural(last)}
    return {" ".join([*head, form]) for form in lasts}


def names_secret(question: str, secret: str, variants: set[str] | None = None) -> bool:
    """True if the text contains the secret (or a plural/singular form) as whole words. Not the
    engine's win rule (see games.rules.wins): a text filter, e.g. for facts that would give the
    word away."""
    haystack = f" {' '.join(words(question))} "
    return any(f" {v} " in haystack for v in (variants or secret_variants(secret)))


def content_words(question: str) -> list[str]:
    return [w for w in words(question) if w not in _STOP]
