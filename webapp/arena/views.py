"""Arena pages: parse, call one service or selector, render (the battle panel for htmx)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.arena import board, exports, selectors, services
from webapp.arena.forms import BattleStartForm, EmptyForm, ExclusionForm, SideAnswerForm, WordForm
from webapp.catalog.selectors import word_list_summaries
from webapp.core.exceptions import ApplicationError
from webapp.core.exports import TABLE_FORMATS, download
from webapp.core.panels import panel_action, panel_status, redirect_without_htmx
from webapp.play.visitors import remember_game, visitor_from_request


@require_GET
def arena_new(request):
    lists = [wl.name for wl in word_list_summaries() if wl.name != board.ARENA_WORDS]
    return render(request, "arena/new.html", {"word_lists": lists})


@require_POST
def battle_start(request):
    form = BattleStartForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a word list from the list, or none.")
        return redirect("arena:new")
    try:
        battle = services.battle_start(
            visitor=visitor_from_request(request),
            word_list=form.cleaned_data["word_list"] or None,
        )
    except ApplicationError as err:
        messages.error(request, err.message)
        return redirect("arena:new")
    remember_game(request, battle.game_a)
    remember_game(request, battle.game_b)
    return redirect("arena:battle", public_id=battle.public_id)


def _battle_or_404(request, public_id):
    try:
        return services.battle_get(public_id, visitor_from_request(request))
    except ApplicationError as err:
        raise Http404(err.message) from err


@require_GET
def battle_page(request, public_id):
    battle = _battle_or_404(request, public_id)
    context = selectors.battle_context(battle)
    template = "arena/partials/battle_panel.html" if request.htmx else "arena/battle.html"
    return render(request, template, context)


def _act(request, public_id, form_class, act, invalid="Choose one of the answers."):
    """Run one action on the battle, answer with the refreshed panel (or redirect without htmx);
    `invalid`: what an invalid form is told. A battle that is not the visitor's is 404 before
    anything runs, as its page is."""
    _battle_or_404(request, public_id)
    form = form_class(request.POST)
    visitor = visitor_from_request(request)
    error, status = panel_action(request, form, act, visitor, lambda _: invalid)
    back = redirect_without_htmx(request, error, "arena:battle", public_id=public_id)
    if back is not None:
        return back
    context = selectors.battle_context(_battle_or_404(request, public_id))
    context["error"] = error
    return render(request, "arena/partials/battle_panel.html", context, status=panel_status(status))


@require_POST
def side_answer(request, public_id):
    return _act(
        request,
        public_id,
        SideAnswerForm,
        lambda visitor, data: services.battle_answer(public_id=public_id, visitor=visitor, **data),
    )


@require_POST
def battle_finish(request, public_id):
    return _act(
        request,
        public_id,
        WordForm,
        lambda visitor, data: services.battle_finish(
            public_id=public_id, visitor=visitor, word=data["word"]
        ),
        invalid="Type your word (at most 100 characters).",
    )


@require_POST
def battle_abandon(request, public_id):
    return _act(
        request,
        public_id,
        EmptyForm,
        lambda visitor, _: services.battle_abandon(public_id=public_id, visitor=visitor),
    )


# -- researchers -------------------------------------------------------------------------------
@role_required(RESEARCHER)
def people(request):
    if request.method == "POST":
        form = ExclusionForm(request.POST)
        if form.is_valid():
            _exclusion(request, form.cleaned_data)
        else:
            messages.error(request, "Name one person to exclude or include.")
        return redirect("arena:people")
    return render(request, "arena/people.html", {"people": selectors.people_rows()})


def _exclusion(request, data) -> None:
    user = get_object_or_404(get_user_model(), pk=data["user_id"]) if data["user_id"] else None
    who = {"user": user, "guest_key": "" if user else data["guest_key"]}
    try:
        if data["action"] == "exclude":
            services.person_exclude(by=request.user, reason=data["reason"], **who)
            messages.success(
                request, "Excluded: their battles count nowhere from the next refresh."
            )
        else:
            services.person_include(by=request.user, **who)
            messages.success(request, "Included again from the next refresh.")
    except ApplicationError as err:
        messages.error(request, err.message)


@require_POST
@role_required(RESEARCHER)
def words_refresh(request):
    word_list = board.arena_words_refresh(created_by=request.user)
    if word_list is None:
        messages.info(request, "No new words: “arena words” is up to date.")
    else:
        messages.success(request, f"Created “{word_list.name}” version {word_list.version}.")
    return redirect("arena:people")


@require_GET
@role_required(RESEARCHER)
def export(request, fmt: str):
    if fmt not in TABLE_FORMATS:
        raise Http404(fmt)
    return download(exports.battles_export(fmt), f"arena-battles.{fmt}")
