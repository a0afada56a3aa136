"""Issue 32: the `reference` win rule became what the paper's scripts run (exact match only); the
rule it meant before is now called `lemma`. Every game and job stored before says so, so that its
outcome is re-judged, not taken, under today's `reference` (games.metrics.won_under); the boards'
next refresh shows them on a board of their own rule."""

from django.db import migrations

OLD, RENAMED = "reference", "lemma"


def relabel(apps, schema_editor):
    for model in (apps.get_model("play", "Game"), apps.get_model("jobs", "Job")):
        changed = []
        for row in model.objects.only("pk", "config").iterator():
            config = row.config if isinstance(row.config, dict) else None
            if config is None:
                continue
            # a game without a win_rule was played under the default, which was this rule
            if config.get("win_rule") == OLD or (
                model.__name__ == "Game" and "win_rule" not in config
            ):
                row.config = {**config, "win_rule": RENAMED}
                changed.append(row)
        model.objects.bulk_update(changed, ["config"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("play", "0001_initial"),
        ("jobs", "0003_job_claim_published_at"),
    ]

    operations = [migrations.RunPython(relabel, migrations.RunPython.noop)]
