"""Jobs API: submit (202), read, cancel, resume. Researchers only for writes."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.accounts.roles import IsResearcher
from webapp.core.api import validated
from webapp.jobs import services
from webapp.jobs.models import Job
from webapp.jobs.serializers import JobOutputSerializer, JobSubmitInputSerializer


class JobListSubmitApi(APIView):
    permission_classes = [IsAuthenticated, IsResearcher]

    @extend_schema(responses=JobOutputSerializer(many=True))
    def get(self, request):
        jobs = Job.objects.select_related("created_by").order_by("-created_at")[:100]
        return Response(JobOutputSerializer(jobs, many=True).data)

    @extend_schema(
        request=JobSubmitInputSerializer,
        responses={202: JobOutputSerializer, 503: JobOutputSerializer},
    )
    def post(self, request):
        """202 once queued; 503 with the stored job (its id and url) when the broker is down: the
        job stays queued and is published again automatically, so the client must not resubmit."""
        data = validated(JobSubmitInputSerializer, request.data)
        try:
            job = services.job_submit(kind=data["kind"], params=data["config"], user=request.user)
        except services.JobNotPublished as exc:
            job = Job.objects.get(pk=exc.job_id)
            body = {**JobOutputSerializer(job).data, "detail": exc.message}
            return Response(
                body,
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
                headers={"Location": body["url"], "Retry-After": "30"},
            )
        body = JobOutputSerializer(job).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class JobDetailApi(APIView):
    permission_classes = [IsAuthenticated, IsResearcher]

    @extend_schema(responses=JobOutputSerializer)
    def get(self, request, job_id: int):
        return Response(JobOutputSerializer(get_object_or_404(Job, pk=job_id)).data)


class JobCancelApi(APIView):
    permission_classes = [IsAuthenticated, IsResearcher]

    @extend_schema(request=None, responses=JobOutputSerializer)
    def post(self, request, job_id: int):
        job = services.job_cancel(job=get_object_or_404(Job, pk=job_id))
        return Response(JobOutputSerializer(job).data)


class JobResumeApi(APIView):
    permission_classes = [IsAuthenticated, IsResearcher]

    @extend_schema(request=None, responses={202: JobOutputSerializer})
    def post(self, request, job_id: int):
        job = services.job_resume(job=get_object_or_404(Job, pk=job_id))
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)
