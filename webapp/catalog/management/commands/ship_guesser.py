"""Ship a training job's checkpoint as a published guesser of games/data/models/ (issue 44):

    python manage.py ship_guesser smollm2-20q-sft --checkpoint sft-job1-step375 \
        --evaluation 7 --validation 4,5,6 --latency bench/results/guesser-latency.json

writes the adapter (float16), training_config.json, guesser.json, MODEL_CARD.md and the
evaluation job's games (webapp.catalog.shipping); `make run`'s seed registers it on the next start.
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from training.shipping import ShippingError
from webapp.catalog.shipping import ARMS, ship_checkpoint_guesser


class Command(BaseCommand):
    help = "Ship a training job's checkpoint (a model spec) with its held-out evaluation job."

    def add_arguments(self, parser):
        parser.add_argument("name", help="the shipped guesser's name, e.g. smollm2-20q-sft")
        parser.add_argument("--checkpoint", required=True, help="the checkpoint's model spec")
        parser.add_argument(
            "--evaluation", type=int, required=True, help="the finished held-out evaluation job"
        )
        parser.add_argument("--arm", default="sft", choices=ARMS)
        parser.add_argument(
            "--validation", default="", help="comma-separated evaluation jobs that chose it"
        )
        parser.add_argument(
            "--latency",
            type=Path,
            help="a bench.guesser_latency JSON file: its entry for the checkpoint goes on the card",
        )
        parser.add_argument("--limits", default="", help="the card's Limits paragraph")

    def handle(self, *args, **options):
        latency = None
        if options["latency"]:
            measured = json.loads(options["latency"].read_text(encoding="utf-8"))
            latency = measured.get("guessers", {}).get(options["checkpoint"])
            if latency is None:
                raise CommandError(f"{options['latency']} has no entry for the checkpoint")
            latency = {**latency, "command": measured.get("command", "")}
        try:
            settings = ship_checkpoint_guesser(
                name=options["name"],
                checkpoint_spec=options["checkpoint"],
                evaluation_job=options["evaluation"],
                arm=options["arm"],
                validation_jobs=tuple(int(j) for j in options["validation"].split(",") if j),
                latency=latency,
                limits=options["limits"],
            )
        except ShippingError as err:
            raise CommandError(str(err)) from err
        self.stdout.write(json.dumps(settings, indent=1))
