"""Hand-built games for the leaderboard tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def spec(db):
    from webapp.catalog.models import ModelSpec

    def make(name: str, role: str = "guesser", kind: str = "infogain"):
        return ModelSpec.objects.get_or_create(name=name, defaults={"kind": kind, "role": role})[0]

    return make


@pytest.fixture
def word_list(db):
    from webapp.catalog.models import WordList

    return WordList.objects.create(name="test/words", version=2)


@pytest.fixture
def make_game(db):
    """make_game(secret, won, n_turns, **fields): one finished game (model vs model unless mode=
    says otherwise). A model game belongs to a finished evaluation job and a person's game is
    played under the strict rule, unless job= or config= say otherwise: only those count on the
    boards."""
    from webapp.jobs.models import Job
    from webapp.play.models import Game

    counter = {"n": 0}
    finished_job = Job.objects.create(kind="evaluation", status="finished")

    def make(
        secret: str,
        won: bool | None,
        n_turns: int = 10,
        *,
        max_turns: int | None = 20,
        outcome: str | None = None,
        **fields,
    ):
        counter["n"] += 1
        outcome = outcome or ("won" if won else "lost")
        status = {
            "won": "finished",
            "lost": "finished",
            "abandoned": "abandoned",
            "playing": "playing",
        }[outcome]
        fields.setdefault("mode", "model")
        fields.setdefault("finished_at", T0 + timedelta(minutes=counter["n"]))
        rule = {"win_rule": "strict"} if fields["mode"] == "human_guesser" else {}
        fields.setdefault(
            "config", {"max_turns": max_turns, **rule} if max_turns is not None else rule
        )
        if fields["mode"] == "model":
            fields.setdefault("job", finished_job)
            fields.setdefault("sample_index", counter["n"])  # a job stores each (word, sample) once
        return Game.objects.create(
            secret=secret, outcome=outcome, status=status, n_turns=n_turns, **fields
        )

    return make
