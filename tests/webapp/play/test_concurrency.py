"""Two submissions of the same turn at the same moment store exactly one turn (row lock +
expected_index)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from games.engine import TwentyQuestions
from tests.webapp.play.support import seed_play_catalog, visitor_of
from webapp.core.exceptions import ApplicationError
from webapp.play import services
from webapp.play.models import Turn


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_submissions_of_one_turn_store_exactly_one(player, monkeypatch):
    seed_play_catalog()
    visitor = visitor_of(player)
    game = services.game_start(visitor=visitor, role="guesser")

    # Judging takes a while, so both requests are inside the service at the same time.
    real_step = TwentyQuestions.step
    monkeypatch.setattr(
        TwentyQuestions, "step", lambda self, q: (time.sleep(0.3), real_step(self, q))[1]
    )

    start = threading.Barrier(2)
    results: list[object] = []

    def submit(question: str) -> None:
        try:
            start.wait()
            results.append(
                services.turn_submit(
                    game_id=game.pk, visitor=visitor, question=question, expected_index=0
                )
            )
        except ApplicationError as err:
            results.append(err)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(q,)) for q in ("Is it alive?", "Is it big?")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)

    stored = [r for r in results if isinstance(r, Turn)]
    refused = [r for r in results if isinstance(r, ApplicationError)]
    assert len(stored) == 1 and len(refused) == 1
    # The loser waited for the lock and then saw the new turn (not a constraint violation).
    assert refused[0].status == 409 and "is not the next one" in refused[0].message
    assert list(Turn.objects.filter(game=game).values_list("question", flat=True)) == [
        stored[0].question
    ]
    game.refresh_from_db()
    assert game.n_turns == 1
