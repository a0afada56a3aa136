"""Issue 32's data migration: games and jobs stored under the old `reference` rule (lemma and stem
matches) are relabelled `lemma`, so today's `reference` (exact only) re-judges their wins."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from games import metrics
from webapp.jobs.models import Job
from webapp.play.models import Game

relabel = importlib.import_module(
    "webapp.play.migrations.0002_games_played_under_lemma_rule"
).relabel

pytestmark = pytest.mark.django_db


def test_old_reference_games_and_jobs_become_lemma_and_others_stay():
    old = Game.objects.create(secret="glasses", config={"max_turns": 20, "win_rule": "reference"})
    default = Game.objects.create(secret="dog", config={"max_turns": 20})  # the old default
    strict = Game.objects.create(secret="dog", config={"win_rule": "strict"})
    job = Job.objects.create(kind="evaluation", config={"win_rule": "reference", "samples": 2})
    other_job = Job.objects.create(kind="smoke", config={"steps": 1})

    relabel(apps, None)

    for game, rule in ((old, "lemma"), (default, "lemma"), (strict, "strict")):
        game.refresh_from_db()
        assert game.config["win_rule"] == rule
    assert old.config["max_turns"] == 20  # nothing else changes
    job.refresh_from_db()
    other_job.refresh_from_db()
    assert job.config == {"win_rule": "lemma", "samples": 2}
    assert other_job.config == {"steps": 1}


def test_a_relabelled_lemma_win_is_not_a_reference_success():
    """How a relabelled game counts: won under lemma by "Is it made of glass?", which the
    reference's exact method does not accept."""
    assert metrics.won_under(
        "lemma", won=True, played_rule="lemma", question="Is it made of glass?", secret="glasses"
    )
    assert not metrics.won_under(
        "reference",
        won=True,
        played_rule="lemma",
        question="Is it made of glass?",
        secret="glasses",
    )
    assert metrics.won_under(
        "reference", won=True, played_rule="lemma", question="Is it glasses?", secret="glasses"
    )
