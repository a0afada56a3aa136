"""Question suggestions while a person types: the knowledge base's question forms, completed
with concepts its judge answers well ("Does it have a wheel?", not "Does it have a white
russia?")."""

from __future__ import annotations

from functools import lru_cache

from webapp.catalog import builders
from webapp.catalog.models import ModelKind
from webapp.play.models import Game
from webapp.play.services import KB_JUDGE

MAX_SUGGESTIONS = 12


@lru_cache(maxsize=1)
def kb_judge():
    """The default knowledge-base judge, built once."""
    from games.registry import build_judge

    return build_judge(KB_JUDGE)


def question_helper(game: Game):
    """The knowledge-base judge whose question forms and concepts are suggested while a person
    types: the game's own, or for the pretrained, learned and hybrid judges (which answer any
    question) the default one. None for other judges."""
    if game.judge is None:
        return None
    if game.judge.kind == ModelKind.KB:
        return builders.judge_for(game.judge)
    answers_any = (ModelKind.PRETRAINED, ModelKind.LEARNED, ModelKind.HYBRID)
    return kb_judge() if game.judge.kind in answers_any else None


def question_suggestions(*, game: Game, text: str) -> list[str]:
    """Questions the knowledge base understands (see question_helper) that continue what was
    typed."""
    judge = question_helper(game)
    if judge is None:
        return []
    typed = " ".join((text or "")[:200].split())
    low = typed.lower()
    out: list[str] = []
    for head, tail in _form_heads(judge.forms()):
        if low.startswith(head.lower()):
            prefix = typed[len(head) :].rstrip("?").strip()
            wants_vowel = head.endswith(" an ")
            answers_well = _answers_well(judge, head)
            for concept in judge.vocabulary(prefix, limit=SUGGESTION_POOL):
                if head.endswith((" a ", " an ")) and (concept[:1] in "aeiou") != wants_vowel:
                    continue
                if answers_well(concept):
                    out.append(f"{head}{concept}{tail}")
        elif head.lower().startswith(low):
            out.append(head)
    return list(dict.fromkeys(out))[:MAX_SUGGESTIONS]


SUGGESTION_POOL = 200  # concepts read per form before those the judge answers badly are dropped
SUGGESTION_MIN_NOUNS = 5  # a concept is suggested where it holds for at least this many nouns
# the knowledge-base relations behind each question form (games.kb.questions.FORMS)
FORM_RELATIONS = {
    "Is it a kind of ": ("isa",),
    "Is it a ": ("isa",),
    "Is it an ": ("isa",),
    "Is it ": ("prop", "isa"),
    "Does it have a ": ("has",),
    "Does it have an ": ("has",),
    "Is it part of a ": ("part",),
    "Is it part of an ": ("part",),
    "Is it made of ": ("made",),
    "Is it related to ": ("rel",),
}


def _answers_well(judge, head: str):
    """A test of a concept for the form starting `head`: the knowledge base has it under the
    form's relation for at least SUGGESTION_MIN_NOUNS nouns ("Does it have a wheel?", not "Does it
    have a white russia?"), or for "Is it a …?" it is a common noun (a guess). Everything passes
    for a judge without a knowledge base or a form not listed."""
    kb, relations = getattr(judge, "kb", None), FORM_RELATIONS.get(head)
    if kb is None or relations is None:
        return lambda concept: True
    counts = _coverage(kb)
    guesses = _common_nouns(kb) if head in ("Is it a ", "Is it an ") else frozenset()

    def test(concept: str) -> bool:
        if concept in guesses:
            return True
        features = (kb.concept(relation, concept) for relation in relations)
        return any(f is not None and counts[f] >= SUGGESTION_MIN_NOUNS for f in features)

    return test


@lru_cache(maxsize=2)
def _coverage(kb):
    return kb.coverage("any")


@lru_cache(maxsize=2)
def _common_nouns(kb) -> frozenset:
    return frozenset(kb.top_nouns)


def _form_heads(forms: list[str]) -> list[tuple[str, str]]:
    """(text before the concept, text after it) for every form, "a"/"an" variants included,
    longest first so the most specific form wins."""
    heads = []
    for form in forms:
        head, _, tail = form.partition("{x}")
        heads.append((head, tail))
        if head.endswith(" a "):
            heads.append((head[:-2] + "an ", tail))
    return sorted(heads, key=lambda ht: -len(ht[0]))
