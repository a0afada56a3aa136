"""Export a training job's checkpoint as a stage artifact a later session resumes from (issue 44):

    python manage.py export_checkpoint sft-job5-step375 bench/results/smollm2-study/sft

the adapter in float16, its training_config.json and stage.json (webapp.catalog.shipping).
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from training.shipping import ShippingError
from webapp.catalog.shipping import export_checkpoint


class Command(BaseCommand):
    help = "Export a checkpoint's adapter, config and job record into a folder to commit."

    def add_arguments(self, parser):
        parser.add_argument("checkpoint", help="the checkpoint's model spec, e.g. sft-job5-step375")
        parser.add_argument("out", type=Path)

    def handle(self, *args, checkpoint, out, **options):
        try:
            stage = export_checkpoint(checkpoint, out)
        except ShippingError as err:
            raise CommandError(str(err)) from err
        self.stdout.write(json.dumps({k: v for k, v in stage.items() if k != "job"}))
