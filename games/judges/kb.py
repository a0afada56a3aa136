"""The knowledge-base judge: answers the question forms of games.kb.questions from WordNet.

Yes when the question grounds to a `relation:concept` feature the secret has (the feature is the
judge's raw text). A fact that is absent is a No only where the knowledge base is complete for a
noun: its hypernyms under the judge's sense policy (`isa`), except where the taxonomy has gaps
(games.kb.gaps: categories people file things under by use, such as "pet" for a dog, and senses
WordNet misfiled, such as the tree sense of "redwood"). Parts, materials, relations and
properties are stored sparsely (WordNet lists some parts of some things), so an absent one is
`unknown` rather than a confident No ("Is it man-made?" for a comb). `closed=True` answers No to
every absent fact: the closed world of the information-gain guesser's own model, which the
training miniature plays in (`vouch_all=True` keeps the open world's other answers but vouches
for every absent category, as before the gaps were known). A question that does not ground is
`unknown`. Never raises.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence

from games.judges.base import Judge, JudgeRequest, UnknownSecretError
from games.kb import DEFAULT_SENSE, KnowledgeBase, load_kb, normalise_key
from games.kb.gaps import TaxonomyGaps
from games.kb.knowledge import check_sense
from games.kb.questions import FORMS, FUNCTION_WORDS, ground
from games.types import JudgeAnswer, Verdict

MAX_CACHED = 200_000  # parsed questions (and looked-up secrets) kept per judge
COMPLETE_RELATIONS = ("isa",)  # relations whose absence the KB can vouch for


class KBJudge(Judge):
    def __init__(
        self,
        kb: KnowledgeBase | None = None,
        sense: str = DEFAULT_SENSE,
        closed: bool = False,
        *,
        vouch_all: bool = False,
    ):
        self.kb = kb or load_kb()
        self.sense = check_sense(sense)
        self.closed = bool(closed)
        self.gaps = None if vouch_all else TaxonomyGaps(self.kb)
        self.name = (
            "kb" + ("" if sense == DEFAULT_SENSE else f"-{sense}") + ("-closed" if closed else "")
        )
        self._groundings: dict[str, tuple[int | None, str]] = {}
        self._secrets: dict[str, int | None] = {}
        self._vocabulary: list[str] | None = None

    # -- secrets -----------------------------------------------------------------
    def _noun(self, secret: str) -> int | None:
        noun = self._secrets.get(secret, -1)
        if noun == -1:
            noun = self.kb.lookup(secret) if isinstance(secret, str) else None
            if len(self._secrets) < MAX_CACHED:
                self._secrets[secret] = noun
        return noun

    def check_secret(self, secret: str) -> None:
        if self._noun(secret) is None:
            raise UnknownSecretError(
                f"{secret!r} is not a noun of the knowledge base (WordNet 3.0 nouns of the shipped "
                "word lists and of the 30,000 most frequent English words)"
            )

    # -- questions -----------------------------------------------------------------
    def ground(self, question: str) -> tuple[int | None, str]:
        """(feature id, "relation:concept") or (None, why it cannot be grounded)."""
        found = self._groundings.get(question) if isinstance(question, str) else None
        if found is None:
            found = ground(self.kb, question)
            if len(self._groundings) >= MAX_CACHED:
                self._groundings.clear()
            if isinstance(question, str):
                self._groundings[question] = found
        return found

    def answer(self, secret: str, question: str) -> JudgeAnswer:
        try:
            noun = self._noun(secret)
            if noun is None:
                return JudgeAnswer(Verdict.UNKNOWN, raw=f"unknown secret {str(secret)[:80]!r}")
            feature, raw = self.ground(question)
            if feature is None:
                return JudgeAnswer(Verdict.UNKNOWN, raw=raw)
            if feature in self.kb.feature_set(noun, self.sense):
                return JudgeAnswer(Verdict.YES, raw=raw)
            if self.closed or (self.complete(feature) and self.vouches_no(noun, feature)):
                return JudgeAnswer(Verdict.NO, raw=raw)
            if self.complete(feature):
                return JudgeAnswer(Verdict.UNKNOWN, raw=f"unknown: {raw} is a taxonomy gap")
            return JudgeAnswer(Verdict.UNKNOWN, raw=f"unknown: no {raw} fact stored")
        except Exception as err:  # a judge must answer whatever it is given
            return JudgeAnswer(Verdict.UNKNOWN, raw=f"error: {type(err).__name__}")

    def complete(self, feature: int) -> bool:
        """Whether an absent `feature` is a fact the KB vouches for (its relation is complete)."""
        return self.kb.features[feature].split(":", 1)[0] in COMPLETE_RELATIONS

    def vouches_no(self, noun: int, feature: int) -> bool:
        """Whether the absence of a complete-relation `feature` is a No for this noun (not a gap
        of the taxonomy: games.kb.gaps)."""
        if self.gaps is None:
            return True
        return self.gaps.vouches_no(noun, self.kb.features[feature].split(":", 1)[1])

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        return [self.answer(r.secret, r.question) for r in requests]

    # -- autocompletion --------------------------------------------------------------
    @staticmethod
    def forms() -> list[str]:
        """Question templates this judge understands; {x} stands for a concept word."""
        return list(FORMS)

    def vocabulary(self, prefix: str = "", limit: int = 50) -> list[str]:
        """Concept words it can ground starting with `prefix`, the most useful first (common
        words that apply to many nouns: "animal", "car", "wood")."""
        if self._vocabulary is None:
            self._vocabulary = sorted(c for c in self.kb.concept_rank if c not in FUNCTION_WORDS)
        if not isinstance(prefix, str) or limit <= 0:
            return []
        start = normalise_key(prefix)
        if start and prefix[-1:].isspace():
            start += " "  # "musical " completes to "musical instrument", not "musicality"
        lo = bisect.bisect_left(self._vocabulary, start)
        hi = bisect.bisect_left(self._vocabulary, start + "\uffff")
        rank = self.kb.concept_rank
        return heapq.nsmallest(limit, self._vocabulary[lo:hi], key=lambda c: (-rank[c], c))
