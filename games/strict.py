"""The strict win rule's knowledge-base side (`GameConfig.win_rule="strict"`, games.rules): which
things a guess-form question names ("Is it a rowboat?", "Is it a dog or a cat?"), whether a phrase
names the secret (the same knowledge-base noun or a dominant sense's lemma), whether a list names
several things and whether a guessed noun is another thing the secret is not.

games.rules turns these into verdicts. The knowledge base loads on first use (numpy, scipy and its
data file): importing this module, like importing games.rules, reads nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

from games.text import clean_text, secret_variants, words

# A guessed noun that at least this many knowledge-base nouns are kinds of is a category, not a
# thing: "Is it a fruit?" is left to the judge even where the KB does not file the secret under it.
CATEGORY_MIN_KINDS = 100


_SUBJECT = (
    r"(?:it|this|that|they|these|those|the secret(?: word| object| thing| noun)?"
    r"|the (?:word|object|thing|answer|noun|item)"
    r"|your (?:secret )?(?:word|object|thing|answer|noun|item)|your secret)"
)
_GUESS = re.compile(
    r"^(?:(?:so|ok|okay|well|then|and|hmm|alright|next|now|guess|my guess|final guess"
    r"|my final guess)(?: ,)? )*"
    rf"(?:(?:is|are) {_SUBJECT} (?:called |named )?"
    rf"|(?:could|can|might|would|will|may|must) {_SUBJECT} be "
    r"|are you thinking (?:of|about) |do you mean )"
    r"(?P<object>.+?)(?: ,)?(?: (?:or not|at all|then|perhaps|maybe|by any chance|exactly))*$"
)
_LEADING = {
    "a",
    "an",
    "the",
    "some",
    "any",
    "one",
    "either",
    "perhaps",
    "possibly",
    "maybe",
    "probably",
    "actually",
    "really",
    "just",
    "exactly",
    "specifically",
}
_ARTICLES = {"a", "an", "the"}
_TOKEN_OR_COMMA = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*|,")


def guessed_things(question: str) -> list[tuple[str, bool]] | None:
    """The things a guess-form question names ("Is it a dog?", "Could it be an apple?", "Is your
    word rowboat?"): each item of its object, determiners dropped, with whether an article stood
    before it; None when the question is not a guess form. Items are split at commas and "or"
    (and "and" in a list with commas): "Is it a dog or a cat?" names two."""
    parts = _guess_parts(question)
    return [(phrase, article is not None) for phrase, article in parts[0]] if parts else None


# what follows "Is it a ..." in a question about a kind, a part, a material or a relation
_NOT_A_THING = re.compile(
    r"^(?:kind|type|sort|form|species|variety|breed|part|piece|component|member|example|"
    r"instance|made|related|connected|associated|used|found|bigger|smaller|larger|heavier|lighter|longer|shorter|"
    r"something|anything|thing|object that|thing that)\b"
)
_NAMES_THE_WORD = re.compile(
    r"(?:the|your) (?:secret )?(?:word|answer|noun)|your secret"
    r"|thinking (?:of|about)|do you mean| called | named "
)


def guessed_thing(question: str) -> str | None:
    """The one thing a guess of one thing names, as the asker wrote it ("a rowboat"), or None:
    a guess form with one item that reads as a thing, with an article or asking for the word
    ("Is your word rowboat?"), not a kind, part or material ("Is it a kind of boat?", "Is it
    made of wood?") nor an adjective ("Is it red?"). A broad category counts ("Is it an animal?"):
    the rules answer it (see `guessed_word` for the guesses that may find a kept word)."""
    parts = _guess_parts(question)
    if not parts or len(parts[0]) != 1:
        return None
    (phrase, article), explicit = parts[0][0], parts[1]
    if (article is None and not explicit) or _NOT_A_THING.match(phrase):
        return None
    if len(phrase.split()) > 3 and _kb().lookup(phrase) is None:  # a description, not a name
        return None
    return f"{article} {phrase}" if article else phrase


def guessed_word(question: str) -> str | None:
    """`guessed_thing` where the thing is a plausible secret: not a broad category (one that
    CATEGORY_MIN_KINDS or more knowledge-base nouns are kinds of: "Is it an object?", "Is it an
    organism?" ask about a category). "That's my word" is offered only then."""
    thing = guessed_thing(question)
    if thing is None or _broad_category(guessed_things(question)[0][0]):
        return None
    return thing


def _broad_category(phrase: str) -> bool:
    kind = _kb().concept("isa", phrase)
    return kind is not None and _kinds_of(kind) >= CATEGORY_MIN_KINDS


def _guess_parts(question: str) -> tuple[list[tuple[str, str | None]], bool] | None:
    """(items with the article before each or None, whether the question asks for the word
    itself) of a guess-form question, or None."""
    text = " ".join(
        _TOKEN_OR_COMMA.findall(clean_text(question).lower().replace("’", "'").replace(";", ","))
    )
    match = _GUESS.match(text)
    if not match:
        return None
    obj = match.group("object")
    pattern = r" , (?:(?:or|and) )?| or " + (r"| and " if " , " in obj else "")
    items = []
    for item in re.split(pattern, obj):
        head, article = item.split(), None
        while len(head) > 1 and head[0] in _LEADING:
            word = head.pop(0)
            article = article or (word if word in _ARTICLES else None)
        if head and head != [","]:
            items.append((" ".join(head), article))
    explicit = bool(_NAMES_THE_WORD.search(f" {text[: match.start('object')]}"))
    return (items, explicit) if items else None


@lru_cache(maxsize=1)
def _kb():
    from games.kb import load_kb  # on first use: importing the rules reads no data

    return load_kb()


def same_thing(phrase: str, secret: str) -> bool:
    """True if a noun phrase names the secret: the same words; the same knowledge-base noun
    (plurals, spellings, aliases); or a lemma, multi-word ones included, of one of the secret's
    dominant-sense synsets ("sofa" for couch, "sand dune" for dune). A phrase or secret outside
    the KB's nouns stands for the WordNet synsets that list it as a lemma; for a secret outside
    the KB the same words up to plural/singular count too."""
    phrase, secret = " ".join(words(phrase)), " ".join(words(secret))
    if not phrase or not secret:
        return False
    if phrase == secret:
        return True
    kb = _kb()
    target, noun = kb.lookup(secret), kb.lookup(phrase)
    if target is None:
        if phrase in secret_variants(secret) or secret in secret_variants(phrase):
            return True
    elif noun == target:
        return True
    theirs = kb.senses(target) if target is not None else kb.lemma_senses(secret)
    mine = kb.senses(noun, "any") if noun is not None else kb.lemma_senses(phrase)
    return bool(set(mine) & set(theirs))


def several_things(question: str) -> bool:
    """Whether a question is a guess of several things, which the strict rule calls invalid: two
    or more of its items are knowledge-base nouns (not a property word without an article: "red
    or blue" asks about colours), unless every item is a category the KB files under, or over,
    each other one ("an idea or a concept": one category question) or none is a candidate, a noun
    that is not a broad category ("an animal or a plant"). The secret plays no part, so the
    browser tells it before the question is asked (no turn spent) and the verdict tells nothing
    about the secret."""
    things = guessed_things(question)
    return things is not None and several_of(things)


def several_of(things: list[tuple[str, bool]]) -> bool:
    kb = _kb()
    named = [
        p for p, a in things if kb.lookup(p) is not None and (a or p not in kb.concepts["prop"])
    ]
    return (
        len(named) > 1
        and not _nested_categories([p for p, _ in things])
        and any(not _broad_category(p) for p in named)
    )


def _nested_categories(phrases: list[str]) -> bool:
    """Whether every two of the phrases are categories (`isa` concepts) one filed under the other
    (any sense)."""
    kb = _kb()
    kinds = [kb.concept("isa", p) for p in phrases]
    if any(k is None for k in kinds):
        return False
    nouns = [kb.lookup(p) for p in phrases]

    def under(i: int, j: int) -> bool:
        return nouns[i] is not None and kb.holds(nouns[i], kinds[j], "any")

    n = len(phrases)
    return all(under(i, j) or under(j, i) for i in range(n) for j in range(i + 1, n))


def another_thing(phrase: str, secret: str) -> bool:
    """Whether a guessed noun (not the secret) is a thing the secret is not: a knowledge-base noun
    that is neither a category the secret is filed under (any of its senses), nor a broad one, nor
    an open one (games.kb.gaps: "pet" for a dog). False for a secret outside the knowledge base:
    there the judge answers."""
    from games.kb.gaps import open_categories

    kb = _kb()
    target, noun = kb.lookup(secret), kb.lookup(phrase)
    if target is None or noun is None or phrase in kb.concepts["prop"]:
        return False
    kind = kb.concept("isa", phrase)
    if kind is None:
        return True
    if kb.features[kind].split(":", 1)[1] in open_categories():
        return False
    return not kb.holds(target, kind, "any") and _kinds_of(kind) < CATEGORY_MIN_KINDS


@lru_cache(maxsize=1 << 12)
def _kinds_of(feature: int) -> int:
    """How many knowledge-base nouns (any sense) have this `isa` feature."""
    return int(_kb_kind_counts()[feature])


@lru_cache(maxsize=1)
def _kb_kind_counts():
    return _kb().coverage("any")
