"""`manage.py compare_evaluations A B`: two evaluation jobs' stored games, paired by secret."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from games.types import Outcome, Trajectory, Turn, Verdict
from webapp.catalog.models import ModelSpec
from webapp.jobs.models import Job, JobStatus
from webapp.play.records import trajectories_store

pytestmark = pytest.mark.django_db


def game(secret: str, won: bool, verdicts: list[Verdict]) -> Trajectory:
    turns = [Turn(i, f"Is it {i}?", v, v.value) for i, v in enumerate(verdicts)]
    return Trajectory(secret, 0, turns=turns, outcome=Outcome.WON if won else Outcome.LOST)


def evaluation(researcher, guesser: str, games: list[Trajectory]) -> Job:
    job = Job.objects.create(
        kind="evaluation",
        config={"guesser": guesser, "judge": "kb"},
        status=JobStatus.FINISHED,
        created_by=researcher,
    )
    trajectories_store(
        games,
        guesser=ModelSpec.objects.get(name=guesser),
        judge=ModelSpec.objects.get(name="kb"),
        job_id=job.pk,
        sample_indices=[0] * len(games),
    )
    return job


def test_the_second_job_against_the_first_on_shared_secrets(seeded, researcher, tmp_path, capsys):
    words = ("cat", "dog", "owl", "fig")
    a = evaluation(researcher, "random", [game(w, False, [Verdict.REPEATED]) for w in words])
    b = evaluation(researcher, "infogain", [game(w, w != "fig", [Verdict.NO]) for w in words])
    call_command(
        "compare_evaluations",
        str(a.pk),
        str(b.pk),
        "--boot",
        "500",
        "--save",
        str(tmp_path / "p.json"),
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "p.json").read_text())
    assert printed["words"] == 4 and printed["configs"]["b"]["guesser"] == "infogain"
    assert printed["won"]["difference"] == 0.75 and printed["repeated"]["difference"] == -1.0


def test_a_job_without_games_is_a_clear_error(seeded, researcher):
    empty = Job.objects.create(kind="evaluation", config={}, created_by=researcher)
    with pytest.raises(CommandError, match=f"job {empty.pk} stored no games"):
        call_command("compare_evaluations", str(empty.pk), str(empty.pk))
    with pytest.raises(CommandError, match="no job 999999"):
        call_command("compare_evaluations", "999999", str(empty.pk))
