"""Rule-based checks that run before and after every judge (ΔBelief-RL protocol).

Pure functions: normalisation, question syntax, which questions name the secret under each
win rule (`rule_verdict`, `wins`) and the fixed feedback sentences. The text helpers live in
games.text (which games.kb reads) and the strict rule's knowledge-base side in games.strict; both
are re-exported here.

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
from dataclasses import replace
from functools import lru_cache

import lightlemma

from games import strict
from games.strict import (  # noqa: F401  (the strict rule's names, re-exported)
    CATEGORY_MIN_KINDS,
    _broad_category,
    _kb,
    guessed_thing,
    guessed_things,
    guessed_word,
    same_thing,
    several_things,
)
from games.text import (  # noqa: F401  (the text helpers, re-exported: callers read them here)
    _VOWELS,
    clean_text,
    clean_word,
    content_words,
    names_secret,
    normalise_question,
    plural,
    secret_variants,
    singular_forms,
    singulars,
    words,
)
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


def feedback(verdict: Verdict, raw: str = "") -> str:
    """The sentence a turn's asker reads: the fixed one for the verdict, or for a guess the rules
    answered No, which thing it is not ("No, it is not a canoe.")."""
    prefix = f"rule: {ANOTHER_THING}: "
    if verdict is Verdict.NO and raw.startswith(prefix):
        return f"No, it is not {raw[len(prefix) :]}."
    return VERDICT_FEEDBACK[verdict]


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


# -- the strict rule: a guess names one thing (its knowledge-base side: games.strict) ---------
def _strict_verdict(text: str, secret: str) -> tuple[Verdict, str] | None:
    things = strict.guessed_things(text)
    if not things:
        return None
    if len(things) > 1:
        return (Verdict.INVALID, SEVERAL_THINGS) if strict.several_of(things) else None
    if strict.same_thing(things[0][0], secret):
        return Verdict.FINISHED, NAMES_SECRET
    other = strict.guessed_thing(text)
    if other is not None and strict.another_thing(things[0][0], secret):
        if other == things[0][0]:  # "Is your word canoe?": "No, it is not a canoe."
            other = f"{'an' if other[0] in _VOWELS else 'a'} {other}"
        return Verdict.NO, f"{ANOTHER_THING}: {other}"
    return None
