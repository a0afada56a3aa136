"""Submit a curation job from the shell (validated like the launch form), optionally running it
here.

    python manage.py curate --set source=word_lists --set word_lists=dbrl/solved,dbrl/unsolved \
        --set samples=4 --set name=dbrl/curated --run-here
"""

import json
import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from webapp.jobs.models import Job
from webapp.jobs.services import job_run, job_submit


class Command(BaseCommand):
    help = "Submit a curation job (KEY=VALUE config fields); --run-here runs it in this process."

    def add_arguments(self, parser):
        parser.add_argument(
            "--set", action="append", default=[], metavar="KEY=VALUE", help="a config field"
        )
        parser.add_argument("--words-file", help="source=text: read the words from this file")
        parser.add_argument(
            "--run-here",
            action="store_true",
            help="run the job now instead of leaving it to a worker",
        )

    def handle(self, *args, **options):
        params = dict(item.split("=", 1) for item in options["set"] if "=" in item)
        if options["words_file"]:
            params.setdefault("source", "text")
            with open(options["words_file"], encoding="utf-8") as f:
                params["words"] = f.read()
        try:
            job = job_submit(kind="curation", params=params)
        except ValidationError as exc:
            raise CommandError(
                f"refused: {exc.message_dict if hasattr(exc, 'message_dict') else exc.messages}"
            ) from None
        self.stdout.write(f"queued curation job {job.pk}")
        if not options["run_here"]:
            return
        started = time.perf_counter()
        status = job_run(job_id=job.pk, worker="manage.py curate")
        job = Job.objects.get(pk=job.pk)
        self.stdout.write(
            json.dumps(
                {
                    "job": job.pk,
                    "status": status,
                    "wall_seconds": round(time.perf_counter() - started, 1),
                    "error": job.error or None,
                    "result": job.result,
                },
                indent=1,
            )
        )
