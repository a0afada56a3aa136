"""Annotators pulling from the queue at the same moment (threads, each with its own connection):
no item gets more labels than it asked for and nobody labels an item twice. Run on Postgres too
(DATABASE_URL), where allocation uses SELECT … FOR UPDATE SKIP LOCKED."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection
from django.db.models import F

from webapp.core.exceptions import ApplicationError
from webapp.labelling import services
from webapp.labelling.models import DisagreementItem, Label

pytestmark = pytest.mark.django_db(transaction=True)


def _run(workers):
    start = threading.Barrier(len(workers))
    errors: list[BaseException] = []

    def wrap(fn):
        def body():
            try:
                start.wait()
                fn()
            except BaseException as err:  # noqa: BLE001 - reported by the test
                errors.append(err)
            finally:
                connection.close()

        return body

    threads = [threading.Thread(target=wrap(fn)) for fn in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    return errors


def test_annotators_pulling_at_once_never_overfill_or_repeat(make_user):
    items = DisagreementItem.objects.bulk_create(
        [
            DisagreementItem(secret=f"word{i}", question="Is it an animal?", labels_needed=2)
            for i in range(8)
        ]
    )
    people = [make_user("annotator") for _ in range(6)]
    handed: Counter = Counter()
    lock = threading.Lock()

    def annotate(user):
        def loop():
            while True:
                item = services.assignment_next(user=user)
                if item is None:
                    return
                with lock:
                    handed[(user.pk, item.pk)] += 1
                try:
                    services.label_submit(user=user, item_id=item.pk, verdict="yes")
                except ApplicationError as err:  # a full item is refused, never over-filled
                    assert err.status == 409
                    services.item_skip(user=user, item_id=item.pk)

        return loop

    assert _run([annotate(u) for u in people]) == []
    per_item = Counter(Label.objects.values_list("item_id", flat=True))
    assert all(per_item[i.pk] == 2 for i in items)  # every item filled exactly
    assert not DisagreementItem.objects.exclude(labels_count=F("labels_needed")).exists()
    pairs = list(Label.objects.values_list("item_id", "annotator_id"))
    assert len(pairs) == len(set(pairs)) == 16
    assert max(handed.values()) == 1  # nobody was handed the same item twice


def test_simultaneous_labels_on_one_item_stop_at_labels_needed(make_user):
    item = DisagreementItem.objects.create(
        secret="bank", question="Is it an artifact?", labels_needed=3
    )
    people = [make_user("annotator") for _ in range(6)]
    outcomes: list[str] = []

    def label(user):
        def body():
            try:
                services.label_submit(user=user, item_id=item.pk, verdict="no")
                outcomes.append("ok")
            except ApplicationError as err:
                outcomes.append(err.message)

        return body

    # one person twice at once, plus five others: the duplicate and the surplus are refused
    assert _run([label(people[0]), label(people[0])] + [label(u) for u in people[1:]]) == []
    item.refresh_from_db()
    assert item.labels_count == 3 == Label.objects.filter(item=item).count()
    assert outcomes.count("ok") == 3 and len(outcomes) == 7
    assert Label.objects.filter(item=item, annotator=people[0]).count() <= 1


def test_allocation_skips_locked_rows_where_the_database_can(annotator):
    from django.test.utils import CaptureQueriesContext

    DisagreementItem.objects.create(secret="bank", question="Is it an artifact?")
    with CaptureQueriesContext(connection) as queries:
        assert services.assignment_next(user=annotator) is not None
    sql = " ".join(q["sql"] for q in queries.captured_queries).upper()
    if connection.features.has_select_for_update_skip_locked:  # Postgres
        assert "FOR UPDATE OF" in sql and "SKIP LOCKED" in sql
    else:  # SQLite: transactions run one at a time (IMMEDIATE), no row locks
        assert "FOR UPDATE" not in sql
