"""Jobs (curation, training, evaluation, exports) and what they produce."""

from __future__ import annotations

from django.db import models

from webapp.core.fields import optional_link, optional_user_link


class JobStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    STOPPING = "stopping", "stopping"
    STOPPED = "stopped", "stopped"
    FAILED = "failed", "failed"
    FINISHED = "finished", "finished"


# queued → running → stopping → stopped | failed | finished. A dead worker's job goes back to
# queued (re-queued) or to failed; resume moves a stopped or failed job back to queued.
ALLOWED_TRANSITIONS: dict[str, set[str]] = {
    JobStatus.QUEUED: {JobStatus.RUNNING, JobStatus.STOPPED, JobStatus.FAILED},
    JobStatus.RUNNING: {JobStatus.STOPPING, JobStatus.FINISHED, JobStatus.FAILED, JobStatus.QUEUED},
    JobStatus.STOPPING: {JobStatus.STOPPED, JobStatus.FAILED, JobStatus.FINISHED},
    JobStatus.STOPPED: {JobStatus.QUEUED},
    JobStatus.FAILED: {JobStatus.QUEUED},
    JobStatus.FINISHED: set(),
}
ACTIVE_STATUSES = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.STOPPING)


class InvalidTransition(Exception):
    pass


class Job(models.Model):
    kind = models.CharField(max_length=32)
    config = models.JSONField(default=dict, help_text="the validated config dataclass as a dict")
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    queue = models.CharField(max_length=32, default="cpu")
    progress = models.FloatField(default=0.0)
    progress_message = models.CharField(max_length=300, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    task_id = models.CharField(max_length=100, blank=True)
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    attempt = models.PositiveIntegerField(default=1, help_text="1 for a new job; retries count up")
    requeues = models.PositiveIntegerField(
        default=0, help_text="times re-queued after its worker died"
    )
    claim = models.PositiveIntegerField(
        default=0,
        help_text=(
            "fencing token: counts claims by workers; "
            "a worker writes only while it holds the latest"
        ),
    )
    published_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when its task message was last handed to the broker (empty: not yet)",
    )
    retry_of = optional_link("self", "retries")
    created_by = optional_user_link("jobs")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status"]), models.Index(fields=["kind", "status"])]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"

    def can_move_to(self, status: str) -> bool:
        return status in ALLOWED_TRANSITIONS[JobStatus(self.status)]

    def check_transition(self, status: str) -> None:
        if not self.can_move_to(status):
            raise InvalidTransition(f"job {self.pk} cannot go from {self.status} to {status}")

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES


class Metric(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="metrics")
    step = models.IntegerField()
    name = models.CharField(max_length=100)
    value = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "name", "step"]
        indexes = [models.Index(fields=["job", "name", "step"])]


class JobLog(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="logs")
    level = models.CharField(max_length=10, default="info")
    message = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "id"]


class Checkpoint(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="checkpoints")
    step = models.IntegerField()
    path = models.CharField(max_length=500)
    is_adapter = models.BooleanField(
        default=False, help_text="a LoRA adapter rather than full weights"
    )
    metrics = models.JSONField(default=dict, blank=True)
    config = models.JSONField(
        default=dict, blank=True, help_text="the resolved config stored with it"
    )
    model_spec = optional_link("catalog.ModelSpec", "checkpoints")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "step"]


class Artifact(models.Model):
    job = optional_link(Job, "artifacts", on_delete=models.CASCADE)
    kind = models.CharField(max_length=32, help_text="e.g. export-jsonl, export-parquet, wordlist")
    name = models.CharField(max_length=200)
    path = models.CharField(max_length=500)
    size_bytes = models.BigIntegerField(default=0)
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]


class WorkerHeartbeat(models.Model):
    hostname = models.CharField(max_length=200, unique=True)
    queues = models.CharField(max_length=200, blank=True)
    # a plain id, not a foreign key: heartbeats are written from a side thread and must never wait
    # on job-row locks
    active_job_id = models.BigIntegerField(null=True, blank=True)
    last_seen = models.DateTimeField()

    class Meta:
        ordering = ["-last_seen"]
