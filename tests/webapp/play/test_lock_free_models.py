"""Models are called with no lock and no transaction held: while a slow judge answers one game's
question, another game's turn completes, the same game can be read and its row locked at once,
and the slow turn is then stored exactly once (a duplicate submission gets 409)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from games.engine import TwentyQuestions
from tests.webapp.play.support import seed_play_catalog, visitor_of
from webapp.core.exceptions import ApplicationError
from webapp.play import services
from webapp.play.models import Game, Turn


@pytest.mark.django_db(transaction=True)
def test_a_slow_judge_blocks_neither_other_games_nor_reads_of_its_own(player, monkeypatch):
    seed_play_catalog()
    visitor = visitor_of(player)
    slow_game = services.game_start(visitor=visitor, role="guesser")
    other_game = services.game_start(visitor=visitor, role="guesser")

    entered, release = threading.Event(), threading.Event()
    real_step = TwentyQuestions.step

    def step(self, question):  # the slow game's judge waits until the test lets it answer
        if self.trajectory.secret == slow_game.secret and question == "Is it alive?":
            entered.set()
            release.wait(timeout=20)
        return real_step(self, question)

    monkeypatch.setattr(TwentyQuestions, "step", step)
    other_game.secret = "zz-" + slow_game.secret  # tell the games apart by secret
    Game.objects.filter(pk=other_game.pk).update(secret=other_game.secret)
    monkeypatch.setattr(services, "_build", lambda factory, spec: _PassJudge())

    results: dict[str, object] = {}

    def submit(name: str, question: str) -> None:
        try:
            results[name] = services.turn_submit(
                game_id=slow_game.pk, visitor=visitor, question=question, expected_index=0
            )
        except ApplicationError as err:
            results[name] = err
        finally:
            connection.close()

    slow = threading.Thread(target=submit, args=("slow", "Is it alive?"))
    slow.start()
    assert entered.wait(timeout=20), "the judge was never asked"
    try:
        began = time.perf_counter()
        services.turn_submit(
            game_id=other_game.pk, visitor=visitor, question="Is it big?", expected_index=0
        )
        other_seconds = time.perf_counter() - began
        began = time.perf_counter()
        with transaction.atomic():  # the slow game's row is not locked by its turn in progress
            nowait = connection.features.has_select_for_update_nowait
            Game.objects.select_for_update(nowait=nowait).get(pk=slow_game.pk)
        lock_seconds = time.perf_counter() - began
        read = services.trajectory_of(Game.objects.get(pk=slow_game.pk))
        still_judging = slow.is_alive()
    finally:
        release.set()
    slow.join(timeout=30)

    assert still_judging  # everything above happened while the judge was answering
    assert other_seconds < 2.0 and lock_seconds < 0.5
    assert read.turns == []  # the read saw the game as it was: no half-stored turn
    assert isinstance(results["slow"], Turn)
    assert Turn.objects.filter(game=other_game).count() == 1
    assert list(Turn.objects.filter(game=slow_game).values_list("question", flat=True)) == [
        "Is it alive?"
    ]

    # the same turn submitted again (a double click arriving late) is refused, not stored twice
    with pytest.raises(ApplicationError) as refused:
        services.turn_submit(
            game_id=slow_game.pk, visitor=visitor, question="Is it alive?", expected_index=0
        )
    assert refused.value.status == 409
    assert Turn.objects.filter(game=slow_game).count() == 1


class _PassJudge:
    """A judge that answers no to everything (the test slows it through the engine's step)."""

    name = "pass"

    def check_secret(self, secret: str) -> None:
        return None

    def judge_batch(self, requests):
        from games.types import JudgeAnswer, Verdict

        return [JudgeAnswer(Verdict.NO, raw="pass: no") for _ in requests]
