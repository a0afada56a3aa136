from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from webapp.accounts.services import roles_ensure
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.catalog.shipped import seed_shipped


class Command(BaseCommand):
    help = (
        "Create roles, import the shipped word lists, register the default models and the shipped "
        "trained guessers, and import their stored evaluation (idempotent)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--tiny-model", action="store_true", help="build the tiny local model if missing"
        )

    def handle(self, *args, tiny_model: bool = False, **options):
        roles_ensure()
        lists = seed_word_lists()
        tiny_dir = None
        if tiny_model:
            tiny_dir = Path(settings.MODELS_DIR) / "tiny-llama"
            if not (tiny_dir / "config.json").exists():
                from training.tiny import build_tiny_model

                self.stdout.write(f"building the tiny model in {tiny_dir} ...")
                build_tiny_model(tiny_dir)
        specs = seed_model_specs(tiny_dir)
        shipped = seed_shipped()
        lists, specs = lists + shipped["word_lists"], specs + shipped["guessers"]
        self.stdout.write(
            f"seed: {len(lists)} word lists imported ({', '.join(lists) or 'none new'}); "
            f"{len(specs)} model specs registered ({', '.join(specs) or 'none new'}); "
            f"{len(shipped['evaluations'])} shipped evaluations imported "
            f"({', '.join(shipped['evaluations']) or 'none new'})"
        )
