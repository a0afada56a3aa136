"""Rule-based checks that run before and after every judge (ΔBelief-RL protocol).

Pure functions: normalisation, question syntax, secret matching (with plural and
singular variants) and the fixed feedback sentences.
"""

from __future__ import annotations

import re
import unicodedata

from games.types import GameConfig, Verdict

INVALID_FEEDBACK = "You have not asked a valid question. Ask a brief yes/no question instead."
REPEATED_FEEDBACK = "You have already asked this question before. Ask a new yes/no question instead."
VERDICT_FEEDBACK = {
    Verdict.YES: "Yes.",
    Verdict.NO: "No.",
    Verdict.UNKNOWN: "I don't know.",
    Verdict.FINISHED: "Correct! You guessed the secret.",
    Verdict.INVALID: INVALID_FEEDBACK,
    Verdict.REPEATED: REPEATED_FEEDBACK,
}

_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
_STOP = {"a", "an", "the", "it", "is", "are", "does", "do", "can", "could", "would", "was", "your"}
_VOWELS = set("aeiou")


def clean_text(text: str) -> str:
    """Unicode-normalise, drop control characters and collapse white space."""
    text = unicodedata.normalize("NFKC", text)
    if not (text.isascii() and text.isprintable()):  # the common case needs no pass per character
        text = "".join(ch if ch.isprintable() or ch in " \t\n" else " " for ch in text)
    return " ".join(text.split())


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


def singulars(word: str) -> set[str]:
    """Every plausible singular of a (possibly plural) word, the word itself included."""
    out = {word}
    if word.endswith("ies") and len(word) > 3:
        out.add(word[:-3] + "y")
    if word.endswith("ves") and len(word) > 3:
        out.update({word[:-3] + "f", word[:-3] + "fe"})
    if word.endswith("es") and len(word) > 2:
        out.add(word[:-2])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 1:
        out.add(word[:-1])
    return out


def secret_variants(secret: str) -> set[str]:
    """Surface forms that count as naming the secret: itself, plural and singular forms."""
    base = " ".join(words(secret))
    if not base:
        return set()
    *head, last = base.split(" ")
    lasts = singulars(last) | {plural(last)}
    return {" ".join([*head, form]) for form in lasts}


def names_secret(question: str, secret: str, variants: set[str] | None = None) -> bool:
    """True if the question names the secret (or a plural/singular form) as whole words."""
    haystack = f" {' '.join(words(question))} "
    return any(f" {v} " in haystack for v in (variants or secret_variants(secret)))


def syntax_error(question: str, config: GameConfig) -> str | None:
    """Why a question is not a single well-formed yes/no question, or None."""
    text = question.strip()
    if len(text) < config.min_question_chars:
        return "too short"
    if len(text) > config.max_question_chars:
        return "too long"
    marks = text.count("?")
    if marks == 0:
        return "no question mark"
    if marks > 1:
        return "several questions"
    if not words(text):
        return "no words"
    return None


def content_words(question: str) -> list[str]:
    return [w for w in words(question) if w not in _STOP]
