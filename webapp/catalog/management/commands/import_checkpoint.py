"""Register an exported stage (manage.py export_checkpoint) as a model spec on this machine, so
the next stage's jobs can name it (issue 44):

    python manage.py import_checkpoint bench/results/smollm2-study/sft
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from training.shipping import ShippingError
from webapp.catalog.shipping import import_checkpoint


class Command(BaseCommand):
    help = "Register an exported stage folder as a model spec (the adapter on its base)."

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path)

    def handle(self, *args, folder, **options):
        try:
            spec = import_checkpoint(folder)
        except ShippingError as err:
            raise CommandError(str(err)) from err
        self.stdout.write(f"{spec.name}: {spec.path} + {spec.adapter_path}")
