"""Researcher pages: dashboard, launch forms, run pages with live metrics, compare, downloads."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.catalog.services import model_spec_publish, model_spec_unpublish
from webapp.core.exceptions import ApplicationError
from webapp.core.exports import content_type_of
from webapp.core.hygiene import InputError, parse_id, parse_ids
from webapp.jobs import formatting, registry, selectors, services
from webapp.jobs.forms import config_form_class, queue_from_form
from webapp.jobs.kinds.evaluation import standard_evaluation
from webapp.jobs.models import Artifact, Checkpoint, Job

QUICK_EVAL = standard_evaluation("infogain")
COMPARE_MAX = 10  # jobs on one compare page


def _runs_context(request) -> dict:
    """The runs table, filtered by ?kind= and ?status=, and whether it refreshes (a job is
    active)."""
    kind, status = request.GET.get("kind") or None, request.GET.get("status") or None
    return {
        "jobs": selectors.jobs_list(kind, status),
        "filter_kind": kind or "",
        "filter_status": status or "",
        "live": selectors.jobs_any_active(),
    }


@role_required(RESEARCHER)
def dashboard(request):
    return render(
        request,
        "jobs/dashboard.html",
        {
            **_runs_context(request),
            "kinds": sorted(registry.REGISTRY.values(), key=lambda k: k.name),
            "queues": selectors.queue_lengths(),
            "workers": selectors.workers_health(),
            **selectors.heartbeat_timing(),
            "quick_eval": QUICK_EVAL,
        },
    )


@role_required(RESEARCHER)
def runs(request):
    """The dashboard's runs table body (htmx polls it while any job is queued or running)."""
    context = {
        **_runs_context(request),
        "selected": {parse_id(i) for i in request.GET.getlist("ids")} - {None},  # kept ticked
    }
    return render(request, "jobs/partials/runs.html", context)


@role_required(RESEARCHER)
def launch(request, kind: str):
    try:
        job_kind = registry.get_kind(kind)
    except ValidationError:
        raise Http404(f"no job kind {kind}") from None
    form_class = config_form_class(job_kind)
    presets = getattr(job_kind.config_class(), "PRESETS", {})  # named settings (sft)
    preset = request.GET.get("preset", "")
    if request.method == "POST":
        form = form_class(request.POST)
        queued = queue_from_form(request, form, job_kind)
        if queued is not None:
            return queued
    elif preset in presets:  # the form starts from the named setting
        form = form_class(initial=presets[preset])
    else:
        form = form_class()
    return render(
        request,
        "jobs/launch.html",
        {"form": form, "kind": job_kind, "presets": list(presets), "preset": preset},
    )


@role_required(RESEARCHER)
@require_POST
def quick_eval(request):
    """One click: evaluate the information-gain guesser with the KB judge on paper_test, k=8."""
    try:
        job = services.job_submit(kind="evaluation", params=QUICK_EVAL, user=request.user)
    except ValidationError as exc:
        messages.error(request, f"Could not queue the evaluation: {'; '.join(exc.messages)}")
        return redirect("jobs:dashboard")
    except services.JobNotPublished as exc:
        messages.warning(request, exc.message)
        return redirect("jobs:detail", job_id=exc.job_id)
    messages.success(request, f"Queued evaluation job {job.pk}.")
    return redirect("jobs:detail", job_id=job.pk)


@role_required(RESEARCHER)
def detail(request, job_id: int):
    job = get_object_or_404(Job.objects.select_related("created_by", "retry_of"), pk=job_id)
    result = job.result or {}
    context = {
        "job": job,
        "logs": selectors.job_log_tail(job),
        # rows, not the dict: a result key such as "items" must not shadow dict methods in templates
        "result_rows": formatting.result_rows(result, skip=("by_difficulty",)),
        "by_difficulty": sorted((result.get("by_difficulty") or {}).items()),
        "checkpoints": job.checkpoints.select_related("model_spec"),
        "artifacts": job.artifacts.all(),
        "games_count": job.games.count(),
        "retries": job.retries.all(),
        "metric_names": [] if request.htmx else selectors.job_metric_names(job),
        "partial": _partial_results(job),  # in the status block: swapped in when a run stops
    }
    template = "jobs/partials/status.html" if request.htmx else "jobs/detail.html"
    return render(request, template, context)


def _partial_results(job: Job) -> dict | None:
    results = selectors.evaluation_partial(job)
    if results is None:
        return None
    return {
        "results": results,
        "by_difficulty": sorted((results.get("by_difficulty") or {}).items()),
    }


@role_required(RESEARCHER)
def metrics_json(request):
    """Metric series of one or more jobs, for the live and comparison charts."""
    try:
        ids = parse_ids([request.GET.get("ids", "")])
    except InputError:
        return JsonResponse({"detail": "ids must be comma-separated job ids"}, status=400)
    statuses = dict(Job.objects.filter(pk__in=ids).values_list("pk", "status"))
    return JsonResponse(
        {
            "jobs": {
                str(j): {"status": statuses.get(j), "metrics": s}
                for j, s in selectors.job_metric_series(ids).items()
            }
        }
    )


@role_required(RESEARCHER)
@require_POST
def action(request, job_id: int, verb: str):
    job = get_object_or_404(Job, pk=job_id)
    try:
        if verb == "cancel":
            services.job_cancel(job=job)
        elif verb == "resume":
            services.job_resume(job=job)
        elif verb == "retry":
            job = services.job_retry(job=job, user=request.user)
        else:
            raise Http404(verb)
    except services.JobNotPublished as exc:  # stored and queued; the sweep publishes it later
        messages.warning(request, exc.message)
        return redirect("jobs:detail", job_id=exc.job_id)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    if request.htmx:  # the run page's status block, swapped in place
        return detail(request, job.pk)
    return redirect("jobs:detail", job_id=job.pk)


@role_required(RESEARCHER)
@require_POST
def checkpoint_action(request, checkpoint_id: int, verb: str):
    """Publish a checkpoint's guesser (offer it to players, after the catalog's check) or take it
    back, from its run page."""
    checkpoint = get_object_or_404(
        Checkpoint.objects.select_related("model_spec"), pk=checkpoint_id
    )
    spec = checkpoint.model_spec
    if spec is None or verb not in ("publish", "unpublish"):
        raise Http404(verb)
    try:
        if verb == "publish":
            model_spec_publish(spec=spec)
            messages.success(request, f"Published {spec.name}: it is offered to players.")
        else:
            model_spec_unpublish(spec=spec)
            messages.success(request, f"Unpublished {spec.name}: no longer offered to players.")
    except ApplicationError as exc:
        messages.error(request, exc.message)
    return redirect("jobs:detail", job_id=checkpoint.job_id)


@role_required(RESEARCHER)
def cancel_confirm(request, job_id: int):
    """The Cancel button's question without JavaScript (htmx asks with hx-confirm)."""
    job = get_object_or_404(Job, pk=job_id)
    return render(request, "jobs/cancel_confirm.html", {"job": job})


@role_required(RESEARCHER)
def compare(request):
    tokens = (p.strip() for text in request.GET.getlist("ids") for p in text.split(","))
    asked = list(dict.fromkeys(p[:40] for p in tokens if p))
    numbers = {p: n for p in asked if (n := parse_id(p)) is not None}
    wanted = list(dict.fromkeys(numbers.values()))
    shown = wanted[:COMPARE_MAX]
    jobs = list(Job.objects.filter(pk__in=shown).order_by("pk"))
    found = {j.pk for j in jobs}
    # named back as asked: unknown ids and what is not an id at all
    missing = [p for p in asked if p not in numbers or numbers[p] in set(shown) - found]
    return render(
        request,
        "jobs/compare.html",
        {
            "jobs": jobs,
            "final": formatting.final_metrics(jobs, selectors.jobs_results(jobs)),
            "diff": selectors.config_diff(jobs),
            "ids": ",".join(str(j.pk) for j in jobs),
            "missing": missing,
            "beyond": len(wanted) - len(shown),
        },
    )


@role_required(RESEARCHER)
def artifact_download(request, artifact_id: int):
    artifact = get_object_or_404(Artifact, pk=artifact_id)
    path = Path(artifact.path).resolve()
    allowed = [Path(settings.EXPORTS_DIR).resolve(), Path(settings.CHECKPOINTS_DIR).resolve()]
    if not path.is_file() or not any(path.is_relative_to(a) for a in allowed):
        raise Http404("artifact file is missing")
    return FileResponse(
        open(path, "rb"),
        as_attachment=True,
        filename=path.name,
        content_type=content_type_of(path.name),
    )
