from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from webapp.accounts.roles import RESEARCHER, require_role
from webapp.jobs.models import Job, WorkerHeartbeat


@login_required
def dashboard(request):
    require_role(request.user, RESEARCHER)
    jobs = Job.objects.select_related("created_by").order_by("-created_at")[:50]
    workers = WorkerHeartbeat.objects.all()[:20]
    return render(request, "jobs/dashboard.html", {"jobs": jobs, "workers": workers})
