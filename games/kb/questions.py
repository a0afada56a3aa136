"""The question language of the knowledge base: parsing questions into `relation:concept`
features, and phrasing features as questions (the two are inverse for every askable feature).

Parsing works on the normalised words of the question (games.text.words: lower case,
punctuation dropped), so case, extra spaces and punctuation do not matter. Plurals, case and
spellings of the concept are resolved by KnowledgeBase.concept.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from games import text as gametext

if TYPE_CHECKING:
    from games.kb.knowledge import KnowledgeBase

MAX_QUESTION_CHARS = 300  # longer text is never one of the forms below

# Templates shown for autocompletion; {x} is a concept word (see KBJudge.vocabulary).
FORMS = (
    "Is it a kind of {x}?",
    "Is it a {x}?",
    "Is it {x}?",
    "Does it have a {x}?",
    "Is it part of a {x}?",
    "Is it made of {x}?",
    "Is it related to {x}?",
)

_SUBJECT = (
    r"(?:it|this|that|the (?:secret )?(?:word|object|thing|answer)"
    r"|your (?:secret )?(?:word|object|thing))"
)
_BE = rf"(?:is {_SUBJECT}|(?:could|can|might|would|will) {_SUBJECT} be)"
_DET = r"(?:(?:a|an|the|some|any|one) )"
_OPENER = re.compile(r"^(?:(?:so|ok|okay|well|then|and|hmm|alright|next) )+")
_CLOSER = re.compile(r"(?: (?:or not|at all|then|perhaps|maybe))+$")

# (relations to try, in order; pattern). The first pattern that matches decides.
_PATTERNS = tuple(
    (relations, re.compile(pattern))
    for relations, pattern in (
        (("isa",), rf"^{_BE} {_DET}?(?:kind|type|sort|form|species|variety|breed) of (?P<x>.+)$"),
        (("part",), rf"^{_BE} {_DET}?(?:part|piece|component|member) of (?P<x>.+)$"),
        (("made",), rf"^{_BE} made (?:out of|of|from) (?P<x>.+)$"),
        (("rel",), rf"^{_BE} (?:related|relating|connected|linked) to (?P<x>.+)$"),
        (("rel",), rf"^{_BE} (?:associated|connected) with (?P<x>.+)$"),
        (("rel",), rf"^does {_SUBJECT} (?:relate|have to do) (?:to|with) (?P<x>.+)$"),
        (("has",), rf"^(?:does|do) {_SUBJECT} (?:have|contain|include)(?: got)? (?P<x>.+)$"),
        (("has",), rf"^has {_SUBJECT} got (?P<x>.+)$"),
        (("isa",), rf"^{_BE} (?:a|an) (?P<x>.+)$"),
        (
            ("prop", "isa"),
            rf"^{_BE} (?:usually |typically |generally |often |always |very )?(?P<x>.+)$",
        ),
    )
)


class Parsed(NamedTuple):
    relations: tuple[str, ...]  # relations to try, in order (the first one the KB knows wins)
    phrase: str  # the concept as written, determiners dropped ("wheels", "musical instrument")


def parse(question: str) -> Parsed | None:
    """The relation(s) and concept phrase of a question in one of FORMS, or None."""
    if not isinstance(question, str) or len(question) > MAX_QUESTION_CHARS:
        return None
    text = " ".join(gametext.words(question))
    text = _CLOSER.sub("", _OPENER.sub("", text))
    for relations, pattern in _PATTERNS:
        match = pattern.match(text)
        if match:
            phrase = match.group("x")
            while True:  # "a", "the", "some" ... at the front are not part of the concept
                head, _, rest = phrase.partition(" ")
                if rest and head in {"a", "an", "the", "some", "any", "one"}:
                    phrase = rest
                else:
                    break
            return Parsed(relations, phrase) if phrase else None
    return None


# English function words: concepts starting with one make questions nobody would ask.
# fmt: off
FUNCTION_WORDS = frozenset(
    [
        "a", "about", "above", "across", "after", "again", "against", "all", "almost", "also",
        "am", "among", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before",
        "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does",
        "doing", "down", "during", "each", "either", "even", "ever", "every", "few", "for", "from",
        "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
        "how", "i", "if", "in", "into", "is", "it", "its", "just", "least", "less", "like", "may",
        "me", "might", "more", "most", "much", "must", "my", "neither", "no", "nor", "not", "now",
        "of", "off", "on", "once", "one", "only", "or", "other", "our", "out", "over", "own",
        "per", "same", "shall", "she", "should", "since", "so", "some", "such", "than", "that",
        "the", "their", "them", "then", "there", "these", "they", "this", "those", "though",
        "through", "thus", "to", "too", "toward", "under", "until", "up", "upon", "us", "very",
        "was", "we", "well", "were", "what", "when", "where", "whether", "which", "while", "who",
        "whom", "whose", "why", "will", "with", "within", "without", "would", "yet", "you", "your",
    ]
)
# fmt: on


def ground(kb: KnowledgeBase, question: str) -> tuple[int | None, str]:
    """(feature id, "relation:concept") for a question, or (None, why it cannot be grounded)."""
    parsed = parse(question)
    if parsed is None:
        return None, "unknown: not a question form the knowledge base can answer"
    for relation in parsed.relations:
        feature = kb.concept(relation, parsed.phrase)
        if feature is not None:
            return feature, kb.features[feature]
    return None, f"unknown: no {'/'.join(parsed.relations)} concept {parsed.phrase[:80]!r}"


_AN_EXCEPTIONS = ("uni", "use", "usu", "eu", "one", "once", "ewe", "uk", "ur")
_AN_SILENT_H = ("hour", "honest", "honor", "honour", "heir")


def article(word: str) -> str:
    """ "a" or "an" for a word, by its spelling (good enough for questions)."""
    if word.startswith(_AN_SILENT_H):
        return "an"
    if word[:1] in "aeiou" and not word.startswith(_AN_EXCEPTIONS):
        return "an"
    return "a"


# Countable or not, from how often the plural is written (wordfreq): zipf(plural) - zipf(word).
COUNT_MIN = -0.5  # at least this: a count noun ("devices", "animals", "eggs")
MASS_MAX = -1.5  # below this: a mass noun ("music", "bread", "journalism", "stuff")
COUNT, MASS = "count", "mass"


def plural_phrase(noun: str, last: str | None = None) -> str:
    """A noun phrase in the plural: its last word replaced by `last` (an irregular plural) or made
    plural by games.text.plural ("swimming pool" -> "swimming pools")."""
    head, _, word = noun.rpartition(" ")
    return (f"{head} " if head else "") + (last or gametext.plural(word))


@lru_cache(maxsize=1 << 17)
def noun_number(word: str, plural: str | None = None) -> str | None:
    """COUNT, MASS or None (either, or unknown) for a noun, by the frequency of its plural
    (`plural`, or the regular one)."""
    from wordfreq import zipf_frequency  # a run-time dependency, imported when first needed

    singular = zipf_frequency(word, "en")
    if singular <= 0:
        return None
    gap = zipf_frequency(plural or plural_phrase(word), "en") - singular
    return COUNT if gap >= COUNT_MIN else MASS if gap < MASS_MAX else None


def phrase(
    relation: str,
    concept: str,
    guess: bool = False,
    number: str | None = None,
    plural: str | None = None,
) -> str:
    """The question that asks `relation:concept` (a guess of a word: "Is it a dog?").

    `number` (see noun_number) picks the article: a mass noun has none ("Does it have stuff?",
    "Is it part of transportation?"); a count noun is related to its plural ("Is it related to
    animals?", `plural` or the regular one). Without it, "a"/"an" and the bare singular."""
    a = article(concept)
    det = "" if number == MASS else f"{a} "
    if relation == "isa":
        return f"Is it {a} {concept}?" if guess else f"Is it a kind of {concept}?"
    if relation == "has":
        return f"Does it have {det}{concept}?"
    if relation == "part":
        return f"Is it part of {det}{concept}?"
    if relation == "made":
        return f"Is it made of {concept}?"
    if relation == "rel":
        if number == COUNT:
            concept = plural or plural_phrase(concept)
        return f"Is it related to {concept}?"
    if relation == "prop":
        return f"Is it {concept}?"
    raise ValueError(f"unknown relation {relation!r}")
