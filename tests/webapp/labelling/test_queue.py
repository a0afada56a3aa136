"""The labelling queue's services: hand-out, blind reveal, skip, undo, full and adjudicated
items."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from webapp.core.exceptions import ApplicationError
from webapp.labelling import selectors, services
from webapp.labelling.models import Assignment, DisagreementItem, Label

pytestmark = pytest.mark.django_db


def test_next_item_is_reserved_and_stays_the_same_until_answered(queued, annotator):
    first = services.assignment_next(user=annotator)
    assert first is not None and services.assignment_next(user=annotator) == first
    assert Assignment.objects.filter(annotator=annotator).count() == 1
    assert selectors.item_reveal(first.pk, annotator) is None  # blind until labelled
    result = services.label_submit(user=annotator, item_id=first.pk, verdict="yes")
    assert not result.completed and result.label.seconds is not None and result.label.seconds >= 0
    reveal = selectors.item_reveal(first.pk, annotator)
    assert {v["judge_name"] for v in reveal["votes"]} == {"kb", "kb-any-sense"}
    assert not Assignment.objects.filter(annotator=annotator).exists()
    second = services.assignment_next(user=annotator)
    assert second is not None and second != first
    progress = selectors.queue_progress(annotator)
    assert progress == {
        "labelled": 1,
        "remaining": 3,
        "skipped": 0,
        "open_items": 4,
        "items": 4,
        "labels_given": 1,
        "labels_wanted": 12,
    }


def test_partly_labelled_items_are_handed_out_first(queued, make_user):
    target = DisagreementItem.objects.order_by("-id").first()
    services.label_submit(user=make_user("annotator"), item_id=target.pk, verdict="no")
    assert services.assignment_next(user=make_user("annotator")) == target


def test_nobody_labels_an_item_twice_and_full_items_are_refused(queued, make_user):
    item = DisagreementItem.objects.first()
    people = [make_user("annotator") for _ in range(4)]
    for person in people[:3]:
        services.label_submit(user=person, item_id=item.pk, verdict="no")
    with pytest.raises(ApplicationError, match="already labelled") as err:
        services.label_submit(user=people[0], item_id=item.pk, verdict="yes")
    assert err.value.status == 409
    with pytest.raises(ApplicationError, match="all the labels"):
        services.label_submit(user=people[3], item_id=item.pk, verdict="yes")
    item.refresh_from_db()
    assert item.labels_count == 3 == item.labels.count()
    assert services.assignment_next(user=people[3]) != item


def test_reserved_slots_are_not_handed_to_others(queued, make_user):
    DisagreementItem.objects.update(labels_needed=1)
    a, b = make_user("annotator"), make_user("annotator")
    first = services.assignment_next(user=a)
    assert services.assignment_next(user=b) != first  # a holds the only slot of `first`
    with pytest.raises(ApplicationError, match="all the labels"):
        services.label_submit(user=b, item_id=first.pk, verdict="yes")
    Assignment.objects.filter(annotator=a).update(expires_at=timezone.now() - timedelta(seconds=1))
    services.label_submit(
        user=b, item_id=first.pk, verdict="yes"
    )  # the lease expired: the slot is free again
    with pytest.raises(ApplicationError, match="all the labels"):
        services.label_submit(user=a, item_id=first.pk, verdict="no")


def test_a_skipped_item_is_never_shown_again(queued, annotator):
    item = services.assignment_next(user=annotator)
    services.item_skip(user=annotator, item_id=item.pk)
    seen = set()
    while (nxt := services.assignment_next(user=annotator)) is not None:
        seen.add(nxt.pk)
        services.label_submit(user=annotator, item_id=nxt.pk, verdict="no")
    assert item.pk not in seen and len(seen) == 3
    assert selectors.queue_progress(annotator)["skipped"] == 1


def test_undo_takes_back_the_last_label_and_gives_the_item_back(queued, annotator):
    item = services.assignment_next(user=annotator)
    services.label_submit(user=annotator, item_id=item.pk, verdict="invalid")
    assert selectors.undoable_label(annotator).item_id == item.pk
    assert services.label_undo(user=annotator) == item
    item.refresh_from_db()
    assert item.labels_count == 0 and not Label.objects.exists()
    assert services.assignment_next(user=annotator) == item  # straight back, slot reserved
    with pytest.raises(ApplicationError, match="no label to undo"):
        services.label_undo(user=annotator)


def test_undo_window_and_adjudication_end_undo(queued, annotator, researcher):
    item = services.assignment_next(user=annotator)
    label = services.label_submit(user=annotator, item_id=item.pk, verdict="yes").label
    Label.objects.filter(pk=label.pk).update(
        created_at=timezone.now() - services.UNDO_WINDOW - timedelta(seconds=1)
    )
    assert selectors.undoable_label(annotator) is None
    with pytest.raises(ApplicationError, match="older"):
        services.label_undo(user=annotator)
    Label.objects.filter(pk=label.pk).update(created_at=timezone.now())
    services.item_adjudicate(user=researcher, item_id=item.pk, gold="no")
    with pytest.raises(ApplicationError, match="gold"):
        services.label_undo(user=annotator)
    assert Label.objects.filter(pk=label.pk).exists()


def test_adjudicated_items_leave_the_queue(queued, annotator, researcher):
    item = DisagreementItem.objects.first()
    services.item_adjudicate(user=researcher, item_id=item.pk, gold="yes")
    item.refresh_from_db()
    assert (
        item.gold == "yes" and item.adjudicated_by == researcher and item.adjudicated_at is not None
    )
    assert item not in selectors.queue_candidates(annotator)
    with pytest.raises(ApplicationError, match="gold"):
        services.label_submit(user=annotator, item_id=item.pk, verdict="no")
    services.item_adjudicate(user=researcher, item_id=item.pk, gold="")
    item.refresh_from_db()
    assert item.gold == "" and item.adjudicated_by is None
    with pytest.raises(ApplicationError):
        services.item_adjudicate(user=researcher, item_id=item.pk, gold="maybe")


def test_bad_verdicts_and_missing_items(queued, annotator):
    with pytest.raises(ApplicationError, match="one of"):
        services.label_submit(
            user=annotator, item_id=DisagreementItem.objects.first().pk, verdict="perhaps"
        )
    with pytest.raises(ApplicationError) as err:
        services.label_submit(user=annotator, item_id=999_999, verdict="yes")
    assert err.value.status == 404
