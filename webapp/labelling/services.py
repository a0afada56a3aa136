"""Writes: handing out items, labels (with undo), skips, adjudication, scoring judges on gold, and
training the learned judge on gold.

Concurrency: every write that changes an item's slots (allocation, label, undo) first locks the
item row, so the fresh counts read under that lock are exact. Allocation takes candidates with
`select_for_update(skip_locked=True)` where the database has it (Postgres), so concurrent
annotators get different items instead of queueing on one row; SQLite runs transactions one at a
time (IMMEDIATE mode), which is the graceful fallback. `labels_count` only grows through a
conditional UPDATE (`labels_count < labels_needed`) in the Label's own transaction, so an item
never gets more labels than it asked for, whatever the requests do.

Undo: your most recent label, within UNDO_WINDOW of giving it, while no researcher has set the
item's gold; the item comes straight back to you with its slot reserved.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from webapp.catalog.builders import model_unusable
from webapp.catalog.models import ModelKind
from webapp.catalog.selectors import model_spec_active
from webapp.core.exceptions import ApplicationError
from webapp.jobs.models import Artifact
from webapp.labelling import selectors
from webapp.labelling.models import Assignment, DisagreementItem, JudgeVote, Label, LabelVerdict
from webapp.labelling.selectors import UNDO_WINDOW
from webapp.labelling.votes import history_of, score_items

LEASE = timedelta(minutes=10)  # how long an item shown to someone keeps their slot
CANDIDATES = 20  # items locked per allocation attempt
MAX_WAITS = 5  # blocking retries when every candidate was locked by other allocators
SYNC_SCORE_LIMIT = (
    500  # gold items a cheap judge (not a language model) is scored on inside the request
)
VERDICTS = tuple(c.value for c in LabelVerdict)


def _lock(item_id: int) -> DisagreementItem:
    item = DisagreementItem.objects.select_for_update().filter(pk=item_id).first()
    if item is None:
        raise ApplicationError("There is no such item.", status=404)
    return item


def _lease(item: DisagreementItem, user, now) -> None:
    updated = Assignment.objects.filter(item=item, annotator=user).update(
        created_at=now, expires_at=now + LEASE, skipped_at=None
    )
    if not updated:
        Assignment.objects.create(item=item, annotator=user, expires_at=now + LEASE)


def assignment_next(*, user) -> DisagreementItem | None:
    """The item this person should label now (the one already reserved for them, else a new one).

    First pass: candidates locked with SKIP LOCKED (no waiting on other allocators). If every
    candidate was locked by someone else, wait for one row at a time (a fresh transaction holding
    a single lock, so allocators never deadlock) and check it again.
    """
    skip_locked = connection.features.has_select_for_update_skip_locked
    item, contended = _allocate(user, skip_locked=skip_locked)
    for _ in range(MAX_WAITS if contended else 0):
        item, contended = _allocate(user, skip_locked=False, limit=1)
        if item is not None or not contended:
            break
    return item


@transaction.atomic
def _allocate(
    user, *, skip_locked: bool, limit: int = CANDIDATES
) -> tuple[DisagreementItem | None, bool]:
    """(item taken or None, whether open candidates remain that this attempt could not take)."""
    now = timezone.now()
    current = selectors.active_assignment(user, now)
    if current is not None:
        return current.item, False
    candidates = selectors.queue_candidates(user, now)
    if connection.features.has_select_for_update:
        candidates = candidates.select_for_update(skip_locked=skip_locked, of=("self",))
    locked = list(candidates[:limit])
    for item in locked:
        item.refresh_from_db(
            fields=["labels_count", "labels_needed", "gold"]
        )  # exact under our row lock
        taken = selectors.reserved_by_others(item.pk, user, now).count()
        if not item.gold and item.labels_count + taken < item.labels_needed:
            _lease(item, user, now)
            return item, False
    if not locked:  # nothing open, or (skip_locked) everything open was locked by other allocators
        return None, skip_locked and selectors.queue_candidates(user, now).exists()
    return None, True  # what we locked turned out full: look again with fresh counts


@dataclass
class Labelled:
    label: Label
    completed: bool  # this label was the item's last


@transaction.atomic
def label_submit(*, user, item_id: int, verdict: str, seconds: float | None = None) -> Labelled:
    if verdict not in VERDICTS:
        raise ApplicationError(f"A label is one of {', '.join(VERDICTS)}.")
    if seconds is not None and not 0 <= seconds < 86_400:
        raise ApplicationError("seconds must be between 0 and 86400.")
    item = _lock(item_id)
    if item.gold:
        raise ApplicationError("A researcher has already set this item's gold label.", status=409)
    if Label.objects.filter(item=item, annotator=user).exists():
        raise ApplicationError("You have already labelled this item.", status=409)
    now = timezone.now()
    mine = Assignment.objects.filter(
        item=item, annotator=user, skipped_at__isnull=True, expires_at__gt=now
    ).first()
    if (
        mine is None
        and item.labels_count + selectors.reserved_by_others(item.pk, user, now).count()
        >= item.labels_needed
    ):
        raise ApplicationError("This item already has all the labels it needs.", status=409)
    if not DisagreementItem.objects.filter(pk=item.pk, labels_count__lt=F("labels_needed")).update(
        labels_count=F("labels_count") + 1
    ):
        raise ApplicationError("This item already has all the labels it needs.", status=409)
    if seconds is None and mine is not None:
        seconds = round(min((now - mine.created_at).total_seconds(), 86_399.0), 2)
    label = Label(item=item, annotator=user, verdict=verdict, seconds=seconds)
    label.full_clean(validate_constraints=False)
    try:
        with transaction.atomic():
            label.save()
    except IntegrityError:  # the unique constraint (item, annotator) backs the check above
        raise ApplicationError("You have already labelled this item.", status=409) from None
    Assignment.objects.filter(item=item, annotator=user).delete()
    item.refresh_from_db(fields=["labels_count"])
    return Labelled(label, item.labels_count >= item.labels_needed)


@transaction.atomic
def item_skip(*, user, item_id: int) -> None:
    """Never show this item to this person again (the slot goes back to the others)."""
    item = _lock(item_id)
    if Label.objects.filter(item=item, annotator=user).exists():
        raise ApplicationError("You have already labelled this item.", status=409)
    now = timezone.now()
    if not Assignment.objects.filter(item=item, annotator=user).update(
        skipped_at=now, expires_at=now
    ):
        Assignment.objects.create(item=item, annotator=user, skipped_at=now, expires_at=now)


@transaction.atomic
def label_undo(*, user) -> DisagreementItem:
    """Take back your most recent label (see UNDO_WINDOW); the item is reserved for you again."""
    label = selectors.last_label(user)
    now = timezone.now()
    if label is None:
        raise ApplicationError("There is no label to undo.", status=409)
    if now - label.created_at > UNDO_WINDOW:
        raise ApplicationError(
            f"Labels can be undone for {int(UNDO_WINDOW.total_seconds() // 60)} minutes; "
            "this one is older.",
            status=409,
        )
    item = _lock(label.item_id)
    if item.gold:
        raise ApplicationError("A researcher has already set this item's gold label.", status=409)
    Label.objects.filter(pk=label.pk).delete()
    DisagreementItem.objects.filter(pk=item.pk, labels_count__gt=0).update(
        labels_count=F("labels_count") - 1
    )
    # the item shown meanwhile goes back to the pool; the undone one is reserved for you
    Assignment.objects.filter(annotator=user, skipped_at__isnull=True).exclude(item=item).delete()
    _lease(item, user, now)
    item.refresh_from_db()
    return item


@transaction.atomic
def item_adjudicate(*, user, item_id: int, gold: str) -> DisagreementItem:
    """Set (or, with "", clear) an item's gold label."""
    if gold not in (*VERDICTS, ""):
        raise ApplicationError(f"Gold is one of {', '.join(VERDICTS)} (or empty to clear it).")
    item = _lock(item_id)
    item.gold = gold
    item.adjudicated_by = user if gold else None
    item.adjudicated_at = timezone.now() if gold else None
    item.full_clean(validate_constraints=False)
    item.save(update_fields=["gold", "adjudicated_by", "adjudicated_at"])
    return item


@dataclass
class GoldScore:
    judge: str
    votes: int = 0
    job_id: int | None = None


def gold_score(*, user, judge: str) -> GoldScore:
    """Score a judge model spec on the gold set: here and now for a cheap judge (knowledge base,
    learned, hybrid) on a small set, else as a `disagreements` job with source=gold."""
    spec = model_spec_active(judge, "judge")
    gold = selectors.gold_labels()
    if not gold:
        raise ApplicationError(
            "There is no gold set yet: adjudicate or fully label some items first.", status=409
        )
    if spec.kind in ModelKind.LLM or len(gold) > SYNC_SCORE_LIMIT:
        from webapp.jobs.services import job_submit

        job = job_submit(
            kind="disagreements", params={"judges": [spec.name], "source": "gold"}, user=user
        )
        return GoldScore(spec.name, job_id=job.pk)
    from webapp.catalog.builders import judge_for

    items = list(DisagreementItem.objects.filter(pk__in=gold).order_by("id"))
    try:
        judge_obj = judge_for(spec)
    except Exception as err:  # a missing model folder, a bad option, ...
        raise ApplicationError(model_unusable(f"The judge “{spec.name}”", err), status=503) from err
    return GoldScore(spec.name, votes=score_items(items, [(spec, judge_obj)]))


TRAIN_KIND = "judge"  # the learned judge's training job (webapp.jobs.kinds.judge)
TRAIN_DATASET = "reference+gold"  # the shipped reference answers plus the gold answers, weighted


@dataclass
class JudgeTraining:
    job_id: int
    gold_answers: (
        int  # gold items with a yes/no answer, the rows the job adds to the reference answers
    )
    artifacts: list
    message: str


@transaction.atomic
def judge_train_launch(*, user) -> JudgeTraining:
    """Queue a `judge` job training the learned judge on the reference answers plus the gold set's
    yes/no answers (weighted by the job's extra_weight), and keep the gold set, as the LLM judge's
    chats, as a downloadable artifact of that job."""
    from webapp.jobs.services import job_submit
    from webapp.labelling import exports

    answers = len(selectors.gold_answers())
    if not answers:
        raise ApplicationError(
            "The gold set has no yes/no answers to train on yet: adjudicate or fully label "
            "some items first.",
            status=409,
        )
    try:
        job = job_submit(kind=TRAIN_KIND, params={"dataset": TRAIN_DATASET}, user=user)
    except ValidationError as err:
        raise ApplicationError(
            f"The {TRAIN_KIND} job was refused: {'; '.join(err.messages)}"
        ) from err
    folder, files, examples = exports.sft_dataset_write()
    meta = {"examples": examples, "folder": str(folder)}
    artifacts = [
        Artifact.objects.create(
            job=job,
            kind="judge-sft-dataset",
            name=f"{folder.name}/{p.name}",
            path=str(p),
            size_bytes=p.stat().st_size,
            meta=meta,
        )
        for p in files
    ]
    return JudgeTraining(
        job.pk,
        answers,
        artifacts,
        f"Queued {TRAIN_KIND} job {job.pk}: the learned judge on the reference answers plus "
        f"{answers} gold answer{'s' if answers != 1 else ''}.",
    )


# -- disputes -------------------------------------------------------------------------------------
DISPUTE_VERDICTS = ("yes", "no")  # what a person may say the answer was
DISPUTABLE = ("yes", "no", "unknown")  # judges' answers a person may dispute
DISPUTE_UNCERTAINTY = 1.0  # a person against the judge: served first, as a coin flip would be


@dataclass
class Dispute:
    item: DisagreementItem
    vote: JudgeVote
    queued: bool  # this dispute queued the turn (else it was queued already)


@transaction.atomic
def turn_dispute(*, visitor, turn_id: int, verdict: str) -> Dispute:
    """A player's "That's wrong" on a judge's answer in their own finished game: their answer is
    stored as a `human:<name>` vote and the turn is queued for labelling (its item, with the
    judge's vote, created unless a disagreements job queued it already)."""
    from webapp.play.models import GameMode, GameStatus, Turn

    turn = Turn.objects.select_related("game", "game__judge").filter(pk=turn_id).first()
    if turn is None:
        raise ApplicationError("There is no such turn.", status=404)
    game = turn.game
    if not visitor.can_continue(game):
        raise ApplicationError("Only the game's player can dispute its answers.", status=403)
    if game.status == GameStatus.PLAYING:
        raise ApplicationError("Answers can be disputed once the game is over.", status=409)
    if (
        game.mode != GameMode.HUMAN_GUESSER
        or turn.verdict not in DISPUTABLE
        or turn.judge_raw.startswith("rule:")
    ):
        raise ApplicationError("Only a judge's yes, no or unknown can be disputed.")
    if verdict not in DISPUTE_VERDICTS or verdict == turn.verdict:
        raise ApplicationError("Say the right answer: the one the judge did not give, yes or no.")
    name = f"human:{visitor.name}"
    if JudgeVote.objects.filter(turn=turn, judge_name=name, job__isnull=True).exists():
        raise ApplicationError("You have already disputed this answer.", status=409)
    earlier = turn.game.turns.filter(index__lt=turn.index).order_by("index")
    item, queued = DisagreementItem.objects.get_or_create(
        source_turn=turn,
        defaults={
            "secret": game.secret,
            "question": turn.question,
            "history": history_of(list(earlier.values("index", "question", "verdict", "feedback"))),
            "uncertainty": DISPUTE_UNCERTAINTY,
        },
    )
    common = {"item": item, "turn": turn, "secret": game.secret, "question": turn.question}
    if queued and game.judge is not None:
        JudgeVote.objects.create(
            **common,
            judge_name=game.judge.name,
            judge_spec=game.judge,
            verdict=turn.verdict,
            raw=turn.judge_raw[:10_000],
            p_yes=(turn.extra or {}).get("p_yes"),
        )
    vote = JudgeVote.objects.create(**common, judge_name=name, user=visitor.user, verdict=verdict)
    return Dispute(item, vote, queued)


@transaction.atomic
def items_withdraw(items) -> tuple[int, int]:
    """Take unlabelled open items out of the queue (e.g. an oversized job's), so the games they
    hide show again; the judges' votes stay, detached. Items with a label or gold are kept.
    Returns (withdrawn, kept)."""
    items = DisagreementItem.objects.filter(pk__in=items.values("pk"))
    withdrawn = items.filter(labels_count=0, gold="")
    ids = list(withdrawn.values_list("pk", flat=True))
    JudgeVote.objects.filter(item_id__in=ids).update(item=None)
    DisagreementItem.objects.filter(pk__in=ids).delete()
    return len(ids), items.count()
