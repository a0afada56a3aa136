from django.contrib import admin

from webapp.jobs.models import Artifact, Checkpoint, Job, JobLog, Metric, WorkerHeartbeat


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "status", "progress", "queue", "worker", "attempt", "created_by", "created_at", "finished_at")
    list_filter = ("kind", "status", "queue", "created_at")
    search_fields = ("id", "kind", "worker", "error")
    raw_id_fields = ("retry_of", "created_by")
    readonly_fields = ("task_id", "started_at", "heartbeat_at", "finished_at", "worker", "result", "error")


@admin.register(Metric)
class MetricAdmin(admin.ModelAdmin):
    list_display = ("job", "step", "name", "value", "created_at")
    list_filter = ("name",)
    search_fields = ("name", "job__id")
    raw_id_fields = ("job",)


@admin.register(JobLog)
class JobLogAdmin(admin.ModelAdmin):
    list_display = ("job", "level", "message", "created_at")
    list_filter = ("level",)
    search_fields = ("message",)
    raw_id_fields = ("job",)


@admin.register(Checkpoint)
class CheckpointAdmin(admin.ModelAdmin):
    list_display = ("job", "step", "path", "is_adapter", "model_spec", "created_at")
    list_filter = ("is_adapter",)
    search_fields = ("path",)
    raw_id_fields = ("job", "model_spec")


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "job", "size_bytes", "created_at")
    list_filter = ("kind",)
    search_fields = ("name", "path")
    raw_id_fields = ("job",)


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ("hostname", "queues", "active_job", "last_seen")
    search_fields = ("hostname",)
