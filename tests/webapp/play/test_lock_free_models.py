"""Models are called with no lock and no transaction held: while a slow judge answers one game's
question, another game's turn completes, the same game can be read and its row locked at once,
and the slow turn is then stored exactly once (a duplicate submission gets 409).

"While" is shown by events, not by a stopwatch: the slow judge stays inside the model until the
test lets it go, which the test does only after the other turn, the row lock and the read are done;
its wait has a timeout only so that a regression fails instead of hanging."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from games.engine import TwentyQuestions
from tests.webapp.play.support import seed_play_catalog, visitor_of
from webapp.core.exceptions import ApplicationError
from webapp.play import services
from webapp.play.models import Game, Turn

HANG_GUARD_S = 20  # only so that a regression fails rather than hangs: never what is asserted


@pytest.mark.django_db(transaction=True)
def test_a_slow_judge_blocks_neither_other_games_nor_reads_of_its_own(player, monkeypatch):
    seed_play_catalog()
    visitor = visitor_of(player)
    slow_game = services.game_start(visitor=visitor, role="guesser")
    other_game = services.game_start(visitor=visitor, role="guesser")

    entered, release, left = threading.Event(), threading.Event(), threading.Event()
    let_go: list[bool] = []  # per slow answer: True if the test let it go, False if it gave up
    judged_meanwhile: list[str] = []  # other games' questions judged while the slow judge waited
    real_step = TwentyQuestions.step

    def step(self, question):  # the slow game's judge waits until the test lets it answer
        if self.trajectory.secret == slow_game.secret and question == "Is it alive?":
            entered.set()
            try:
                let_go.append(release.wait(timeout=HANG_GUARD_S))
            finally:
                left.set()
        elif entered.is_set() and not left.is_set():
            judged_meanwhile.append(question)
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
        services.turn_submit(
            game_id=other_game.pk, visitor=visitor, question="Is it big?", expected_index=0
        )
        other_done_meanwhile = not left.is_set()
        with transaction.atomic():  # the slow game's row is not locked by its turn in progress
            nowait = connection.features.has_select_for_update_nowait
            Game.objects.select_for_update(nowait=nowait).get(pk=slow_game.pk)
        locked_meanwhile = not left.is_set()
        read = services.trajectory_of(Game.objects.get(pk=slow_game.pk))
        still_judging = slow.is_alive() and not left.is_set()
    finally:
        release.set()
    slow.join(timeout=HANG_GUARD_S)

    # everything above happened while the judge was answering: the other game's judge answered
    # then, and neither its turn nor the row lock waited for the slow judge to leave (a lock held
    # across model calls would have kept them waiting until the slow judge gave up)
    assert judged_meanwhile == ["Is it big?"]
    assert other_done_meanwhile and locked_meanwhile and still_judging
    assert let_go == [True]  # the test let the slow judge go, after all that: it never gave up
    assert not slow.is_alive()
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
