"""Judges' votes on labelling items: a judge's answer as a stored vote, an item's game history
(stored on the item as plain dicts, read back as turns) and scoring judges on items.

The `disagreements` job (webapp.jobs.kinds.disagreements) and the labelling services (scoring a
judge on the gold set, a player's dispute) share these; the job kind imports them from here, and
nothing in labelling imports the job kind.
"""

from __future__ import annotations

from django.db import transaction

from games.judges.base import JudgeRequest
from games.types import Turn as TurnData
from games.types import Verdict
from webapp.labelling.models import DisagreementItem, JudgeVote


def as_vote(verdict: Verdict) -> str:
    """A judge's 'finished' on a question that does not name the secret is a yes (the engine's
    rule)."""
    return Verdict.YES.value if verdict is Verdict.FINISHED else verdict.value


def vote_of(answer, **fields) -> JudgeVote:
    """A JudgeVote of a judge's answer (with its p_yes when the judge is probabilistic)."""
    return JudgeVote(
        verdict=as_vote(answer.verdict), raw=answer.raw[:10_000], p_yes=answer.p_yes, **fields
    )


def history_of(turn_rows: list[dict]) -> list[dict]:
    """A game's earlier turns (rows with index, question, verdict and feedback) as an item's
    stored history."""
    return [
        {
            "index": t["index"],
            "question": t["question"],
            "verdict": t["verdict"],
            "feedback": t["feedback"],
        }
        for t in turn_rows
    ]


def history_turns(history: list[dict]) -> tuple[TurnData, ...]:
    """An item's stored history as the turns a judge reads."""
    return tuple(
        TurnData(
            index=h["index"],
            question=h["question"],
            verdict=Verdict(h["verdict"]),
            feedback=h.get("feedback", ""),
        )
        for h in history
    )


def score_items(
    items: list[DisagreementItem], judges, *, job_id: int | None = None, skip=frozenset()
) -> int:
    """Run judges over items (their secret, question and history) and store the votes on them."""
    requests = [JudgeRequest(it.secret, it.question, history_turns(it.history), 0) for it in items]
    votes = []
    for spec, judge in judges:
        todo = [(it, req) for it, req in zip(items, requests) if (it.pk, spec.name) not in skip]
        answers = judge.judge_batch([req for _, req in todo]) if todo else []
        votes += [
            vote_of(
                a,
                item=it,
                turn_id=it.source_turn_id,
                secret=it.secret,
                question=it.question,
                judge_name=spec.name,
                judge_spec=spec,
                job_id=job_id,
            )
            for (it, _), a in zip(todo, answers)
        ]
    with transaction.atomic():
        JudgeVote.objects.bulk_create(votes)
    return len(votes)
