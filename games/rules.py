"""Rule-based checks that run before and after every judge (ΔBelief-RL protocol).

Pure functions: normalisation, question syntax, which questions name the secret under each
win rule (`rule_verdict`, `wins`) and the fixed feedback sentences.

The syntax checks are the reference's `correct_obs` methods `length`, `question`,
`multiple_questions` and `sentence` (bethgelab/delta-belief-rl, utils/syntax.py), plus one of
ours ("no words"). Three win rules (`GameConfig.win_rule`):

- `reference` (the default) — what the paper's training and evaluation scripts run
  (`verify_judge.methods = [exact, sentence, question, multiple_questions, length]`): the
  reference's `exact` method, the secret as a whole token anywhere in the question ("Is it
  related to jacket?"), no lemma or stem match and no question-word check. One deviation: the
  reference leaves a secret of several words to its LLM judge's "Finished" (its methods compare
  single tokens); here its words win when they appear consecutively. The judge answers every
  question that does not name the secret (a false "finished" becomes Yes, as there).
- `lemma` — the reference's `correct_obs` defaults, `exact` and `syntax` (this project's
  `reference` before issue 32): also a token whose lightlemma lemma or stem is the secret's wins
  ("Is it made of wood?" for woods, "Is it made of glass?" for glasses), and a question with no
  question word is invalid unless it names the secret that way. Games stored before that change
  were played under it and are labelled `lemma`.
- `strict` — a guess of one thing ("Is it a rowboat?") that is the secret or the same thing
  (knowledge-base noun, or any lemma of a dominant sense's synset, multi-word ones included:
  "sand dune" for dune); a guess listing several things is invalid (`several_things`; not
  categories filed one under the other, "an idea or a concept"); a guess of one other thing is
  answered No before any judge ("No, it is not a canoe."), unless the secret is a kind of it in
  the knowledge base ("Is it a boat?" for a dinghy: a category question, the judge answers) or
  it is a broad category; any other mention goes to the judge. A question with no question word
  is invalid (the `syntax` method's check).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from functools import lru_cache

import lightlemma

from games.types import GameConfig, Verdict

INVALID_FEEDBACK = "You have not asked a valid question. Ask a brief yes/no question instead."
REPEATED_FEEDBACK = (
    "You have already asked this question before. Ask a new yes/no question instead."
)
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

# The reference's constants (utils/compiled_constants.py): characters that make a reply more than
# one sentence, and the question words, compared by lemma or by stem as lightlemma gives them.
INVALID_CHARS = re.compile("[\x00-\x1f\x7f-\xa0\u2028\u2029]")
# fmt: off
QUESTION_WORDS = [
    "what", "where", "when", "why", "how", "who", "whom", "whose", "which", "is", "are", "was",
    "were", "be", "do", "does", "did", "can", "could", "would", "should", "will", "shall", "may",
    "might", "have", "has", "had",
]
# fmt: on
QUESTION_WORD_LEMMAS = frozenset(lightlemma.lemmatize(w) for w in QUESTION_WORDS)
QUESTION_WORD_STEMS = frozenset(lightlemma.stem(w) for w in QUESTION_WORDS)
MAX_WORD_CHARS = (
    45  # longer tokens are not lemmatised (the reference's bound: the longest English word)
)

# Reasons kept in Turn.judge_raw ("rule: <reason>").
NAMES_SECRET = "names the secret"
SEVERAL_THINGS = "a guess must name one thing"
NO_QUESTION_WORD = "no question word"
ANOTHER_THING = "a guess of another thing"  # "rule: a guess of another thing: a canoe"
# A guessed noun that at least this many knowledge-base nouns are kinds of is a category, not a
# thing: "Is it a fruit?" is left to the judge even where the KB does not file the secret under it.
CATEGORY_MIN_KINDS = 100


def feedback(verdict: Verdict, raw: str = "") -> str:
    """The sentence a turn's asker reads: the fixed one for the verdict, or for a guess the rules
    answered No, which thing it is not ("No, it is not a canoe.")."""
    prefix = f"rule: {ANOTHER_THING}: "
    if verdict is Verdict.NO and raw.startswith(prefix):
        return f"No, it is not {raw[len(prefix) :]}."
    return VERDICT_FEEDBACK[verdict]


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
    engine's win rule (see `wins`): a text filter, e.g. for facts that would give the word away."""
    haystack = f" {' '.join(words(question))} "
    return any(f" {v} " in haystack for v in (variants or secret_variants(secret)))


def syntax_error(question: str, config: GameConfig) -> str | None:
    """Why a reply is not one well-formed question, or None.

    The reference's checks on the stripped reply: 2–500 characters (`length`), exactly one "?"
    (`multiple_questions`) and at the end (`question`), no control character, line break or
    no-break space (`sentence`); plus ours: some word in it.
    """
    text = question.strip()
    if len(text) < config.min_question_chars:
        return "too short"
    if len(text) > config.max_question_chars:
        return "too long"
    if text.count("?") > 1:
        return "several questions"
    if not text.endswith("?"):
        return "does not end with a question mark"
    if INVALID_CHARS.search(text):
        return "a control character or line break"
    if not words(text):
        return "no words"
    return None


def content_words(question: str) -> list[str]:
    return [w for w in words(question) if w not in _STOP]


# -- naming the secret --------------------------------------------------------------------------
def rule_verdict(question: str, secret: str, config: GameConfig) -> tuple[Verdict, str] | None:
    """The rules' verdict on a question before any judge: (INVALID, why), (FINISHED, why), under
    `strict` (NO, ANOTHER_THING: the thing), or None when the judge decides. Invalid beats
    finished, as in the reference's `correct_obs`.

    `strict` and `lemma` make a question with no question word invalid (the reference's `syntax`
    method; under `lemma` a question whose words match the secret by lemma or stem is exempt, as
    there: "Rowboat?" wins); `reference` runs no such check, as the paper's scripts.
    """
    error = syntax_error(question, config)
    if error:
        return Verdict.INVALID, error
    text, secret = question.strip().lower(), clean_word(secret)
    if config.win_rule == "reference":
        return (Verdict.FINISHED, NAMES_SECRET) if _exact_names(text, secret) else None
    tokens = lightlemma.tokenize(text)
    if config.win_rule == "strict":
        if not _has_question_word(tokens):
            return Verdict.INVALID, NO_QUESTION_WORD
        return _strict_verdict(text, secret)
    by_syntax = _syntax_names(tokens, secret)
    if not by_syntax and not _has_question_word(tokens):
        return Verdict.INVALID, NO_QUESTION_WORD
    if by_syntax or _exact_names(text, secret):
        return Verdict.FINISHED, NAMES_SECRET
    return None


@lru_cache(maxsize=1 << 16)  # metrics and leaderboards re-judge the same winning questions often
def wins(
    question: str, secret: str, rule: str = "reference", config: GameConfig | None = None
) -> bool:
    """True if the question ends the game as a win under `rule` (syntax checks included): the one
    predicate behind success under either rule (games.metrics.won_under)."""
    config = replace(config or GameConfig(), win_rule=rule)
    verdict = rule_verdict(question, secret, config)
    return verdict is not None and verdict[0] is Verdict.FINISHED


@lru_cache(maxsize=1 << 16)
def _lemma_stem(word: str) -> tuple[str, str] | None:
    return (
        None if len(word) > MAX_WORD_CHARS else (lightlemma.lemmatize(word), lightlemma.stem(word))
    )


def _has_question_word(tokens: list[str]) -> bool:
    forms = (_lemma_stem(t) for t in tokens)
    return any(
        f is not None and (f[0] in QUESTION_WORD_LEMMAS or f[1] in QUESTION_WORD_STEMS)
        for f in forms
    )


def _token_matches(token: str, secret_word: str) -> bool:
    """The reference's `syntax` match of one token: same lemma or same stem."""
    if token == secret_word:
        return True
    mine, theirs = _lemma_stem(token), _lemma_stem(secret_word)
    return (
        mine is not None and theirs is not None and (mine[0] == theirs[0] or mine[1] == theirs[1])
    )


def _syntax_names(tokens: list[str], secret: str) -> bool:
    """The reference's `syntax` method: a token (lightlemma's) whose lemma or stem is the secret's.

    Deviation: a secret of several words (which the reference leaves to its LLM judge's
    "Finished") is named when its words appear consecutively, each matching as one token does.
    """
    parts = secret.split()
    if not parts or not any(ch.isalnum() for ch in secret):
        return False
    if len(parts) == 1:
        return any(_token_matches(t, parts[0]) for t in tokens)
    n = len(parts)
    return any(
        all(_token_matches(t, p) for t, p in zip(tokens[i : i + n], parts))
        for i in range(len(tokens) - n + 1)
    )


def _exact_names(text: str, secret: str) -> bool:
    """The reference's `exact` method: the secret as a whole token once punctuation and digits are
    dropped (hyphens kept: "t-shirt"); a secret of several words as consecutive tokens."""
    tokens = re.sub(r"[^\w\s-]|\d", "", text).split()
    parts = secret.split()
    n = len(parts)
    return n > 0 and any(tokens[i : i + n] == parts for i in range(len(tokens) - n + 1))


# -- the strict rule: a guess names one thing ---------------------------------------------------
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
    from games.kb import load_kb  # here, not at the top: the KB imports this module

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
    return things is not None and _several_things(things)


def _several_things(things: list[tuple[str, bool]]) -> bool:
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


def _strict_verdict(text: str, secret: str) -> tuple[Verdict, str] | None:
    things = guessed_things(text)
    if not things:
        return None
    if len(things) > 1:
        return (Verdict.INVALID, SEVERAL_THINGS) if _several_things(things) else None
    if same_thing(things[0][0], secret):
        return Verdict.FINISHED, NAMES_SECRET
    other = guessed_thing(text)
    if other is not None and _another_thing(things[0][0], secret):
        if other == things[0][0]:  # "Is your word canoe?": "No, it is not a canoe."
            other = f"{'an' if other[0] in _VOWELS else 'a'} {other}"
        return Verdict.NO, f"{ANOTHER_THING}: {other}"
    return None


def _another_thing(phrase: str, secret: str) -> bool:
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
