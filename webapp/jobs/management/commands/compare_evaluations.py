"""`manage.py compare_evaluations A B [--save FILE]`: evaluation job B against job A on the
secrets both played, per secret, with 95% bootstrap intervals over secrets (games.paired)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from games.paired import compare
from webapp.jobs.models import Job
from webapp.play.models import Game
from webapp.play.records import trajectory_of


def job_games(job_id: int) -> list:
    if not Job.objects.filter(pk=job_id).exists():
        raise CommandError(f"no job {job_id}")
    games = Game.objects.filter(job_id=job_id).prefetch_related("turns")
    trajectories = [trajectory_of(g) for g in games]
    if not trajectories:
        raise CommandError(f"job {job_id} stored no games")
    return trajectories


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("a", type=int, help="the baseline evaluation job")
        parser.add_argument("b", type=int, help="the evaluation job compared with it (b - a)")
        parser.add_argument("--boot", type=int, default=10_000, help="bootstrap resamples")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--save", type=Path, help="also write the JSON here")

    def handle(self, *args, **options):
        try:
            result = compare(
                job_games(options["a"]),
                job_games(options["b"]),
                n_boot=options["boot"],
                seed=options["seed"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        configs = {side: Job.objects.get(pk=options[side]).config for side in ("a", "b")}
        record = {
            "a": options["a"],
            "b": options["b"],
            "method": (
                f"per secret (the mean over its games), difference b - a, {options['boot']:,} "
                f"bootstrap resamples of the secrets (seed {options['seed']}), 2.5/97.5 percentiles"
            ),
            "configs": configs,
            **result,
        }
        text = json.dumps(record, indent=1)
        if options["save"]:
            options["save"].write_text(text + "\n", encoding="utf-8")
        self.stdout.write(text)
