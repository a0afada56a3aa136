"""Labelling pages: the annotators' queue, the researchers' review, agreement and judge accuracy.

Every action is a plain form that works without JavaScript; htmx requests get the fragment
(`labelling/partials/…`), and labelling.js adds the keyboard shortcuts.
"""

from __future__ import annotations

import functools

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from webapp.accounts.roles import ANNOTATOR, RESEARCHER, role_required
from webapp.catalog.selectors import judge_sureness
from webapp.core.exceptions import ApplicationError
from webapp.core.exports import download, jsonl_bytes
from webapp.core.hygiene import parse_id
from webapp.jobs.models import Artifact
from webapp.labelling import exports, selectors, services
from webapp.labelling.forms import (
    AdjudicateForm,
    DisputeForm,
    LabelForm,
    ReviewFilterForm,
    ScoreJudgeForm,
    SubsetForm,
)
from webapp.labelling.models import DisagreementItem, LabelVerdict

KEYS = {"yes": "Y", "no": "N", "unclear": "U", "invalid": "I"}
PAGE = 25


# -- the queue ------------------------------------------------------------------------------------
def _queue_context(request, *, reveal=None, announcement: str = "", error: str = "") -> dict:
    item = services.assignment_next(user=request.user)
    if item is not None:  # blind: no earlier answer to a question still in the queue
        item.history = selectors.blind_history(item, request.user)
    if item is not None:
        announcement = f"{announcement} Next: is “{item.question}” true of “{item.secret}”?".strip()
    elif not announcement:
        announcement = "No items are waiting for you."
    return {
        "item": item,
        "reveal": reveal,
        "progress": selectors.queue_progress(request.user),
        "undoable": selectors.undoable_label(request.user),
        "announcement": announcement,
        "error": error,
        "buttons": [(v.value, v.label, KEYS[v.value]) for v in LabelVerdict],
        "undo_minutes": int(services.UNDO_WINDOW.total_seconds() // 60),
    }


def _respond(request, context: dict, after: int | None = None):
    if request.htmx:
        return render(request, "labelling/partials/queue.html", {**context, "oob": True})
    if context.get("error"):
        messages.error(request, context["error"])
    url = reverse("labelling:queue")
    return redirect(f"{url}?after={after}" if after else url)


def _sure(vote: dict) -> str:
    sure = judge_sureness(vote.get("p_yes"), vote["verdict"])
    return f" ({sure} sure)" if sure else ""


def _revealed(reveal) -> str:
    if reveal is None:
        return ""
    votes = (
        ", ".join(f"{v['judge_name']} {v['verdict']}{_sure(v)}" for v in reveal["votes"])
        or "no judge votes"
    )
    return f"Saved “{reveal['label'].verdict}”. The judges said: {votes}."


@role_required(ANNOTATOR)
def queue(request):
    """The next item to label; `?after=<id>` shows the judges' votes on the item just labelled."""
    after = parse_id(request.GET.get("after"))
    reveal = selectors.item_reveal(after, request.user) if after is not None else None
    return render(request, "labelling/queue.html", _queue_context(request, reveal=reveal))


def _refusals_answered_by(answer):
    """Decorate a view so that a service's refusal (ApplicationError) is answered by
    `answer(request, err)` instead of a try/except in every view."""

    def decorate(view):
        @functools.wraps(view)
        def act(request, *args, **kwargs):
            try:
                return view(request, *args, **kwargs)
            except ApplicationError as err:
                return answer(request, err)

        return act

    return decorate


def _queue_refused(request, err: ApplicationError):
    return _respond(request, _queue_context(request, error=err.message, announcement=err.message))


@role_required(ANNOTATOR)
@require_POST
@_refusals_answered_by(_queue_refused)
def label(request, item_id: int):
    form = LabelForm(request.POST)
    if not form.is_valid():
        return _respond(
            request, _queue_context(request, error="Choose yes, no, unclear or invalid.")
        )
    services.label_submit(user=request.user, item_id=item_id, verdict=form.cleaned_data["verdict"])
    reveal = selectors.item_reveal(item_id, request.user)
    return _respond(
        request,
        _queue_context(request, reveal=reveal, announcement=_revealed(reveal)),
        after=item_id,
    )


@role_required(ANNOTATOR)
@require_POST
@_refusals_answered_by(_queue_refused)
def skip(request, item_id: int):
    services.item_skip(user=request.user, item_id=item_id)
    return _respond(
        request, _queue_context(request, announcement="Skipped; you will not see that item again.")
    )


@role_required(ANNOTATOR)
@require_POST
@_refusals_answered_by(_queue_refused)
def undo(request):
    item = services.label_undo(user=request.user)
    return _respond(
        request,
        _queue_context(
            request, announcement=f"Undone: your label on “{item.question}” was removed."
        ),
    )


# -- review (researchers) --------------------------------------------------------------------------
@role_required(RESEARCHER)
def review(request):
    form = ReviewFilterForm(request.GET)
    show = (form.cleaned_data.get("show") if form.is_valid() else "") or "disputed"
    page = Paginator(selectors.review_items(show), PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "labelling/review.html",
        {
            "rows": [selectors.item_detail(item) for item in page],
            "page": page,
            "show": show,
            "filters": selectors.REVIEW_FILTERS,
            "verdicts": LabelVerdict.choices,
        },
    )


@role_required(RESEARCHER)
@require_POST
def adjudicate(request, item_id: int):
    form = AdjudicateForm(request.POST)
    error = ""
    if not form.is_valid():
        error = "Gold must be yes, no, unclear, invalid or empty."
    else:
        try:
            services.item_adjudicate(
                user=request.user, item_id=item_id, gold=form.cleaned_data["gold"]
            )
        except ApplicationError as err:
            error = err.message
    if request.htmx:
        item = get_object_or_404(
            DisagreementItem.objects.prefetch_related("labels__annotator", "votes"), pk=item_id
        )
        return render(
            request,
            "labelling/partials/review_row.html",
            {"row": selectors.item_detail(item), "verdicts": LabelVerdict.choices, "error": error},
        )
    if error:
        messages.error(request, error)
    return redirect(_local_url(request, request.POST.get("next")) or reverse("labelling:review"))


def _local_url(request, url: str | None) -> str | None:
    """`url` if it is a path on this site (never another host, nor a view name), else None."""
    if (
        url
        and url.startswith("/")
        and url_has_allowed_host_and_scheme(
            url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return url
    return None


# -- agreement and judges (researchers) ------------------------------------------------------------
@role_required(RESEARCHER)
def agreement(request):
    form = SubsetForm(request.GET)
    subset = (form.cleaned_data.get("subset") if form.is_valid() else "") or "all"
    return render(
        request,
        "labelling/agreement.html",
        {"summary": selectors.agreement_summary(subset), "subsets": selectors.SUBSETS},
    )


@role_required(RESEARCHER)
def judges(request):
    board = selectors.judge_leaderboard()
    chart = [
        {
            "judge": r["judge"],
            "value": r["accuracy"]["value"],
            "lo": r["accuracy"]["lo"],
            "hi": r["accuracy"]["hi"],
            "n": r["n"],
        }
        for r in board["rows"]
        if r["accuracy"]["value"] is not None
    ]
    datasets = Artifact.objects.filter(kind="judge-sft-dataset").order_by("-created_at")[:6]
    return render(
        request,
        "labelling/judges.html",
        {
            "board": board,
            "chart": chart,
            "chart_height": 80 + 36 * len(chart),
            "form": ScoreJudgeForm(),
            "datasets": datasets,
            "train_dataset": services.TRAIN_DATASET,
        },
    )


def _judges_refused(request, err: ApplicationError):
    messages.error(request, err.message)
    return redirect("labelling:judges")


@role_required(RESEARCHER)
@require_POST
@_refusals_answered_by(_judges_refused)
def score(request):
    form = ScoreJudgeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a judge model spec.")
        return redirect("labelling:judges")
    result = services.gold_score(user=request.user, judge=form.cleaned_data["judge"])
    if result.job_id:
        messages.success(request, f"Scoring {result.judge} on the gold set in job {result.job_id}.")
        return redirect("jobs:detail", job_id=result.job_id)
    messages.success(request, f"Scored {result.judge}: {result.votes} new votes on the gold set.")
    return redirect("labelling:judges")


@role_required(RESEARCHER)
@require_POST
@_refusals_answered_by(_judges_refused)
def train_judge(request):
    """Queue the learned judge's training on the reference answers plus the gold set; show its run
    page."""
    launch = services.judge_train_launch(user=request.user)
    messages.success(request, launch.message)
    return redirect("jobs:detail", job_id=launch.job_id)


@role_required(RESEARCHER)
def export(request, fmt: str):
    """Every item with its labels, the judges' votes and gold, as JSONL or Parquet."""
    rows = exports.label_rows()
    if fmt == "jsonl":
        body = jsonl_bytes(rows)
    elif fmt == "parquet":
        body = exports.parquet_bytes(rows)
    else:
        raise Http404(fmt)
    return download(body, f"labels.{fmt}")


# -- disputes (the game page's "That's wrong") -----------------------------------------------------
@require_POST
def dispute(request, turn_id: int):
    """A player's "That's wrong" on a judged turn of their own finished game: under htmx the
    button's place says what happened; without, a message on the game page."""
    from webapp.play.models import Turn
    from webapp.play.visitors import visitor_from_request

    form = DisputeForm(request.POST)
    try:
        if not form.is_valid():
            raise ApplicationError("Say the right answer: yes or no.")
        verdict = form.cleaned_data["verdict"]
        services.turn_dispute(
            visitor=visitor_from_request(request), turn_id=turn_id, verdict=verdict
        )
        message, status = f"Thanks: your “{verdict}” is queued for labelling.", 200
    except ApplicationError as err:
        message, status = err.message, err.status
    if request.htmx:
        return render(
            request,
            "labelling/partials/dispute_done.html",
            {"message": message, "error": status >= 400},
            status=status,
        )
    (messages.success if status < 400 else messages.error)(request, message)
    game_id = Turn.objects.filter(pk=turn_id).values_list("game_id", flat=True).first()
    return redirect("play:game", game_id=game_id) if game_id else redirect("core:home")
