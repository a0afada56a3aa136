from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.template.response import TemplateResponse

from webapp.core.admin import ViewOnlyAdmin
from webapp.core.exceptions import ApplicationError
from webapp.jobs import registry, services
from webapp.jobs.forms import config_form_class, queue_from_form
from webapp.jobs.models import Artifact, Checkpoint, Job, JobLog, Metric, WorkerHeartbeat


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "kind",
        "status",
        "progress",
        "queue",
        "worker",
        "attempt",
        "created_by",
        "created_at",
        "finished_at",
    )
    list_filter = ("kind", "status", "queue", "created_at")
    search_fields = ("id", "kind", "worker", "error")
    raw_id_fields = ("retry_of", "created_by")
    readonly_fields = (
        "kind",
        "config",
        "status",
        "queue",
        "progress",
        "task_id",
        "started_at",
        "heartbeat_at",
        "finished_at",
        "worker",
        "result",
        "error",
        "attempt",
        "requeues",
    )
    actions = ["cancel_jobs", "retry_jobs"]

    def add_view(self, request, form_url="", extra_context=None):
        """Choose a kind, then fill in the dashboard's form generated from its config dataclass;
        it queues through services.job_submit, so an invalid config is refused before any Job
        exists, with its errors at the fields."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        name = request.POST.get("kind") or request.GET.get("kind") or ""
        try:
            kind = registry.get_kind(name) if name else None
        except ValidationError:
            kind = None
            messages.error(request, f"There is no job kind {name[:40]!r}; choose one below.")
        form = config_form_class(kind)(request.POST or None) if kind else None
        if form is not None and request.method == "POST":
            queued = queue_from_form(request, form, kind)
            if queued is not None:
                return queued
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Add {kind.name} job" if kind else "Add job: choose a kind",
            "kinds": sorted(registry.REGISTRY.values(), key=lambda k: k.name),
            "kind": kind,
            "form": form,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/jobs/job/add_job.html", context)

    def _each_job(self, request, queryset, act) -> list:
        """`act(job)` on each selected job: a refusal (ApplicationError) is shown as a warning and
        the others go on. Returns what the accepted calls returned."""
        accepted = []
        for job in queryset:
            try:
                accepted.append(act(job))
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.WARNING)
        return accepted

    @admin.action(description="Cancel the selected jobs")
    def cancel_jobs(self, request, queryset):
        asked = self._each_job(request, queryset, lambda job: services.job_cancel(job=job))
        self.message_user(request, f"Asked {len(asked)} job(s) to stop.")

    @admin.action(description="Retry the selected jobs as new attempts")
    def retry_jobs(self, request, queryset):
        queued = self._each_job(
            request, queryset, lambda job: services.job_retry(job=job, user=request.user)
        )
        if queued:
            ids = ", ".join(str(j.pk) for j in queued)
            self.message_user(
                request, f"Queued {len(queued)} new attempt(s): job(s) {ids}.", messages.SUCCESS
            )


class JobPartAdmin(ViewOnlyAdmin):
    """Rows a job stored (metrics, logs, checkpoints, artifacts): shown, never edited here."""

    raw_id_fields = ("job",)


@admin.register(Metric)
class MetricAdmin(JobPartAdmin):
    list_display = ("job", "step", "name", "value", "created_at")
    list_filter = ("name",)
    search_fields = ("name", "job__id")


@admin.register(JobLog)
class JobLogAdmin(JobPartAdmin):
    list_display = ("job", "level", "message", "created_at")
    list_filter = ("level",)
    search_fields = ("message",)


@admin.register(Checkpoint)
class CheckpointAdmin(JobPartAdmin):
    list_display = ("job", "step", "path", "is_adapter", "model_spec", "created_at")
    list_filter = ("is_adapter",)
    search_fields = ("path",)
    raw_id_fields = (*JobPartAdmin.raw_id_fields, "model_spec")


@admin.register(Artifact)
class ArtifactAdmin(JobPartAdmin):
    list_display = ("name", "kind", "job", "size_bytes", "created_at")
    list_filter = ("kind",)
    search_fields = ("name", "path")


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(ViewOnlyAdmin):
    list_display = ("hostname", "queues", "active_job_id", "last_seen")
    search_fields = ("hostname",)
