"""HTML views: parse, call one service or selector, render (an htmx fragment when request.htmx)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from webapp.core.exceptions import ApplicationError
from webapp.core.panels import panel_action, panel_status, redirect_without_htmx
from webapp.labelling.selectors import BLINDED, game_blinded, games_not_blinded
from webapp.play import selectors, services, suggestions
from webapp.play.first_question import game_first_question
from webapp.play.forms import (
    AbandonForm,
    AnswerForm,
    ConfirmSecretForm,
    GameFilterForm,
    GameStartForm,
    QuestionForm,
)
from webapp.play.throttles import GUEST_LIMIT_MESSAGE, GuestLimitUnavailable, guest_may_play
from webapp.play.visitors import remember_game, visitor_from_request

GAMES_PER_PAGE = 25


def _game_or_404(game_id: int):
    game = selectors.game_get(game_id=game_id)
    if game is None:
        raise Http404("no such game")
    return game


def _shown_game_or_404(request, game_id: int):
    """The game and the visitor, or a 404 when the game is hidden while its secret is labelled or
    while its Arena battle goes on (it would name the battle's anonymous guesser)."""
    game, visitor = _game_or_404(game_id), visitor_from_request(request)
    if game_blinded(game, visitor) or selectors.in_running_battle(game):
        raise Http404("no such game")
    return game, visitor


def _page_or_hidden(request, game_id: int):
    """(game, visitor, hidden): `hidden` when the game asks a question still being labelled (see
    webapp.labelling.selectors.games_not_blinded; its pages say so, with a 403); a 404 for a
    running Arena battle's game."""
    game, visitor = _game_or_404(game_id), visitor_from_request(request)
    if selectors.in_running_battle(game):
        raise Http404("no such game")
    return game, visitor, game_blinded(game, visitor)


def _being_labelled(request):
    return render(request, "play/being_labelled.html", status=403)


def _game_page_context(request, game_id: int) -> dict | None:
    """The context of a game's pages (selectors.game_play_context); None while the game is hidden
    (a question of it is being labelled: the page answers _being_labelled)."""
    game, visitor, hidden = _page_or_hidden(request, game_id)
    return None if hidden else selectors.game_play_context(game, visitor)


def _form_error(form) -> str:
    """Every error of a form in words: each field by its label, not its name (a question's
    error speaks for itself)."""
    return " ".join(
        f"{'' if field in ('__all__', 'question') else form[field].label + ': '}{' '.join(errs)}"
        for field, errs in form.errors.items()
    )


# -- playing -----------------------------------------------------------------------------------
@require_GET
def play_new(request):
    return render(request, "play/new.html", selectors.new_game_choices())


def _guest_refusal(request) -> tuple[str | None, int]:
    """(message, status) refusing a guest over the rate limit or while it cannot be counted."""
    try:
        return (None, 200) if guest_may_play(request) else (GUEST_LIMIT_MESSAGE, 429)
    except GuestLimitUnavailable as exc:
        return str(exc.detail), exc.status_code


@require_POST
def game_start(request):
    form = GameStartForm(request.POST)
    refusal, _ = _guest_refusal(request)
    if refusal:
        messages.error(request, refusal)
        return redirect("play:new")
    if not form.is_valid():
        messages.error(request, _form_error(form))
        return redirect("play:new")
    data = form.cleaned_data
    person_asks = data["role"] == services.ROLE_GUESSER
    # The model the person plays against, and a word list only where a word is drawn from it.
    models = (
        {"judge": data["judge"] or None} if person_asks else {"guesser": data["guesser"] or None}
    )
    draws_word = person_asks or data["draw_word"] == "on"
    picked = data["secret"] if not person_asks and data["draw_word"] == "pick" else None
    try:
        game = services.game_start(
            visitor=visitor_from_request(request),
            role=data["role"],
            max_turns=data["max_turns"],
            word_list=(data["word_list"] or None) if draws_word else None,
            secret=picked or None,
            ask_first=False,  # the game page asks for the model's first question, showing progress
            **models,
        )
    except ApplicationError as err:
        messages.error(request, err.message)
        return redirect("play:new")
    remember_game(request, game)
    return redirect("play:game", game_id=game.pk)


@require_GET
def game_play(request, game_id: int):
    context = _game_page_context(request, game_id)
    if context is None:
        return _being_labelled(request)
    if request.htmx:
        return render(request, "play/partials/game_panel.html", context)
    return render(request, "play/game.html", context)


NOT_YOURS = "This game belongs to someone else; start a game of your own."


def _refusal(message: str, status: int) -> HttpResponse:
    """A refused action's answer, htmx or not: the message alone, never the game (its panel would
    show every turn with its verdict, and for a game over the secret)."""
    return HttpResponse(
        format_html('<p class="form-error" role="alert">{}</p>', message), status=status
    )


def _act(request, game_id: int, form_class, act, counted: bool = True):
    """Run one player action and answer with the refreshed game panel (or a redirect without
    htmx). `counted`: the action counts against the guest limit. Before anything else, a game
    hidden from the visitor (being labelled, or of a running Arena battle, see
    `_shown_game_or_404`) answers 404 and someone else's game a short 403; neither shows the
    game."""
    game, visitor = _shown_game_or_404(request, game_id)
    if not visitor.can_continue(game):
        return _refusal(NOT_YOURS, 403)
    form = form_class(request.POST, game=game)
    error, status = _guest_refusal(request) if counted else (None, 200)
    if error is None:
        error, status = panel_action(request, form, act, visitor, _form_error)
    if status == 404:  # gone meanwhile
        raise Http404("no such game")
    if status == 403:  # (the service's own check of whose game it is)
        return _refusal(error or NOT_YOURS, 403)
    back = redirect_without_htmx(request, error, "play:game", game_id=game_id)
    if back is not None:
        return back
    game = _game_or_404(game_id)
    context = selectors.game_play_context(game, visitor)
    context.update(error=error, announcement=error or selectors.turn_announcement(context))
    if error:  # the question stays in the box to be mended
        context["typed"] = str(request.POST.get("question", ""))[:2000]
    return render(request, "play/partials/game_panel.html", context, status=panel_status(status))


def _player_action(form_class, service, *fields: str):
    """A POST view that calls `service` with the game id, the visitor and the named form fields,
    then answers as `_act` does."""

    @require_POST
    def view(request, game_id: int):
        return _act(
            request,
            game_id,
            form_class,
            lambda visitor, data: service(
                game_id=game_id, visitor=visitor, **{field: data[field] for field in fields}
            ),
        )

    return view


question_submit = _player_action(QuestionForm, services.turn_submit, "question", "expected_index")
answer_submit = _player_action(AnswerForm, services.answer_submit, "verdict", "expected_index")
answer_undo = _player_action(AbandonForm, services.answer_undo)
secret_confirm = _player_action(ConfirmSecretForm, services.game_confirm_secret, "secret")
game_abandon = _player_action(AbandonForm, services.game_abandon)


@require_POST
def first_question(request, game_id: int):
    """The model's first question of a game just started (the game page asks for it at once and
    shows progress meanwhile). Not counted against the guest limit: starting the game was, and
    the model is asked once however many requests arrive (webapp.play.first_question)."""
    return _act(
        request,
        game_id,
        AbandonForm,
        lambda visitor, _: game_first_question(game_id=game_id, visitor=visitor),
        counted=False,
    )


@require_GET
def question_suggestions(request, game_id: int):
    game, _ = _shown_game_or_404(request, game_id)
    options = suggestions.question_suggestions(game=game, text=request.GET.get("question", ""))
    return render(request, "play/partials/suggestions.html", {"options": options})


# -- the trajectory browser ----------------------------------------------------------------------
@require_GET
def game_list(request):
    """The trajectory browser. Bare /games/ shows people's games (evaluations would bury them); a
    link with filters but no `show` searches every game. An invalid filter is left out, said in
    words, and the valid ones still apply."""
    form = GameFilterForm(request.GET)
    form.is_valid()
    filters = form.filters()
    if "show" not in filters:
        filters["show"] = "all" if filters else "people"
    games = games_not_blinded(selectors.game_list(**filters), visitor_from_request(request))
    page = Paginator(games, GAMES_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    include_models = query.copy()
    include_models["show"] = "all"
    context = {
        "form": form,
        "show": filters["show"],
        "problems": form.problems(),
        "page": page,
        "query": query.urlencode(),
        "include_models_query": include_models.urlencode(),
        **selectors.filter_choices(),
    }
    template = "play/partials/game_table.html" if request.htmx else "play/game_list.html"
    return render(request, template, context)


@require_GET
def game_detail(request, game_id: int):
    context = _game_page_context(request, game_id)
    if context is None:
        return _being_labelled(request)
    context["chart_data"] = selectors.turn_chart_data(context["turns"], context["candidates"])
    return render(request, "play/trajectory.html", context)


@require_GET
def game_json(request, game_id: int):
    game, visitor, hidden = _page_or_hidden(request, game_id)
    if hidden:
        return JsonResponse({"detail": BLINDED}, status=403)
    response = JsonResponse(selectors.game_export(game, visitor), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="game-{game.pk}.json"'
    return response


# -- players ---------------------------------------------------------------------------------
@require_GET
def my_games(request):
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return redirect("play:player", username=request.user.get_username())


@require_GET
def player_detail(request, username: str):
    user = get_object_or_404(get_user_model(), username=username)
    games = games_not_blinded(selectors.player_games(user=user), visitor_from_request(request))
    page = Paginator(games, GAMES_PER_PAGE).get_page(request.GET.get("page"))
    stats = selectors.player_stats(user=user)
    return render(
        request, "play/player.html", {"profile": user, "stats": stats, "page": page, "query": ""}
    )
