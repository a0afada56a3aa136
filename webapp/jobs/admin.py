from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpResponseRedirect

from webapp.core.exceptions import ApplicationError
from webapp.jobs import registry, services
from webapp.jobs.models import Artifact, Checkpoint, Job, JobLog, Metric, WorkerHeartbeat


class JobAddForm(forms.ModelForm):
    """The admin's add form: same validation as the dashboard and the API (config dataclass +
    references)."""

    kind = forms.ChoiceField(choices=[])
    config = forms.JSONField(
        required=False, initial=dict, help_text="config fields as JSON; defaults fill the rest"
    )

    class Meta:
        model = Job
        fields = ["kind", "config"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(k, k) for k in sorted(registry.REGISTRY)]

    def clean(self):
        data = super().clean()
        if "kind" in data:
            try:
                kind = registry.get_kind(data["kind"])
                config = registry.build_config(kind, data.get("config") or {})
                kind.check_references(config)
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    self.add_error(
                        "config" if field != "kind" else "kind", [f"{field}: {e}" for e in errors]
                    )
        return data


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

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = JobAddForm
        return super().get_form(request, obj, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.readonly_fields

    def get_fields(self, request, obj=None):
        return ["kind", "config"] if obj is None else super().get_fields(request, obj)

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        job = services.job_submit(
            kind=form.cleaned_data["kind"],
            params=form.cleaned_data.get("config") or {},
            user=request.user,
        )
        obj.pk = job.pk
        obj.__dict__.update({k: v for k, v in job.__dict__.items() if not k.startswith("_")})

    def response_add(self, request, obj, post_url_continue=None):
        messages.success(request, f"Queued {obj.kind} job {obj.pk}.")
        return HttpResponseRedirect(f"/jobs/{obj.pk}/")

    @admin.action(description="Cancel the selected jobs")
    def cancel_jobs(self, request, queryset):
        done = 0
        for job in queryset:
            try:
                services.job_cancel(job=job)
                done += 1
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.WARNING)
        self.message_user(request, f"Asked {done} job(s) to stop.")

    @admin.action(description="Retry the selected jobs as new attempts")
    def retry_jobs(self, request, queryset):
        queued = []
        for job in queryset:
            try:
                queued.append(services.job_retry(job=job, user=request.user))
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.WARNING)
        if queued:
            ids = ", ".join(str(j.pk) for j in queued)
            self.message_user(
                request, f"Queued {len(queued)} new attempt(s): job(s) {ids}.", messages.SUCCESS
            )


class JobPartAdmin(admin.ModelAdmin):
    """Rows that belong to a job (metrics, logs, checkpoints, artifacts): the job is picked by
    id."""

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
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ("hostname", "queues", "active_job_id", "last_seen")
    search_fields = ("hostname",)
