"""Several judges voting: the majority verdict plus a disagreement flag for human labelling."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from games.judges.base import Judge, JudgeRequest
from games.types import JudgeAnswer, Verdict

TIE_BREAKS = ("unknown", "first")


class EnsembleJudge(Judge):
    """Majority vote over member judges, each called once per batch.

    A tie between the most common verdicts gives `Verdict.UNKNOWN` (`tie_break="unknown"`) or
    the verdict of the first member, in order, that voted for one of the tied verdicts
    (`tie_break="first"`). `votes` maps each member's name (suffixed `#2`, `#3`, ... when names
    repeat) to its verdict; `disagreement` is True when the members did not all agree.
    A secret is accepted only if every member accepts it.
    """

    def __init__(
        self, judges: Sequence[Judge], *, tie_break: str = "unknown", name: str | None = None
    ):
        if not judges:
            raise ValueError("an ensemble needs at least one judge")
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
        self.judges = list(judges)
        self.tie_break = tie_break
        self.member_names = _unique_names([j.name for j in self.judges])
        self.name = name or "ensemble(" + ",".join(self.member_names) + ")"

    def check_secret(self, secret: str) -> None:
        for judge in self.judges:
            judge.check_secret(secret)

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        if not requests:
            return []
        per_member = [judge.judge_batch(requests) for judge in self.judges]
        return [self._combine([answers[i] for answers in per_member]) for i in range(len(requests))]

    def _combine(self, answers: list[JudgeAnswer]) -> JudgeAnswer:
        verdicts = [a.verdict for a in answers]
        counts = Counter(verdicts)
        top = max(counts.values())
        tied = [v for v, c in counts.items() if c == top]
        if len(tied) == 1:
            verdict = tied[0]
        elif self.tie_break == "first":
            verdict = next(v for v in verdicts if v in tied)
        else:
            verdict = Verdict.UNKNOWN
        raw = "\n".join(
            f"{name}: {a.verdict.value} | {a.raw}" for name, a in zip(self.member_names, answers)
        )
        return JudgeAnswer(
            verdict,
            raw=raw,
            votes={name: a.verdict.value for name, a in zip(self.member_names, answers)},
            disagreement=len(counts) > 1,
        )


def _unique_names(names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        candidate, k = name, 1
        while candidate in out:
            k += 1
            candidate = f"{name}#{k}"
        out.append(candidate)
    return out
