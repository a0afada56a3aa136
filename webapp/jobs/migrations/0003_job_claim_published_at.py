from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("jobs", "0002_heartbeat_active_job_id"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="claim",
            field=models.PositiveIntegerField(
                default=0,
                help_text="fencing token: counts claims by workers; a worker writes only while it holds the latest",
            ),
        ),
        migrations.AddField(
            model_name="job",
            name="published_at",
            field=models.DateTimeField(
                blank=True, help_text="when its task message was last handed to the broker (empty: not yet)",
                null=True,
            ),
        ),
    ]
