from rest_framework import serializers

from webapp.jobs.models import Job


class JobSubmitInputSerializer(serializers.Serializer):
    kind = serializers.CharField(max_length=32)
    config = serializers.DictField(required=False, default=dict)


class JobOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "url",
            "kind",
            "config",
            "status",
            "queue",
            "progress",
            "progress_message",
            "worker",
            "error",
            "result",
            "attempt",
            "requeues",
            "retry_of",
            "created_by",
            "created_at",
            "started_at",
            "heartbeat_at",
            "finished_at",
        ]

    def get_url(self, obj) -> str:
        return f"/api/jobs/{obj.pk}/"
