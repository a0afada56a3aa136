"""Reads for playing and for the trajectory browser: games, their turns, charts, exports, stats."""

from __future__ import annotations

import datetime as dt

from django.db.models import Avg, Count, Q, QuerySet
from django.urls import reverse

from games import rules
from games.guessers import natural as natural_guesser
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec
from webapp.catalog.selectors import (
    model_specs_for,
    model_specs_to_play,
    word_list_latest,
    word_list_summaries,
)
from webapp.play import services
from webapp.play.first_question import awaits_first_question
from webapp.play.models import Game, GameMode, GameOutcome, GameStatus, Turn
from webapp.play.question_checks import ANSWER_LABELS, rule_note
from webapp.play.records import trajectory_of
from webapp.play.services import (
    DEFAULT_GUESSER,
    DEFAULT_WORD_LIST,
    MAX_TURNS_LIMIT,
    default_judge,
)
from webapp.play.suggestions import question_helper
from webapp.play.visitors import Visitor

# A guesser's belief is shown once its top word has more than this: before that it is near uniform
# and its "top 5" are alphabetical ties ("aardvark, aardwolf, …").
INFORMATIVE_BELIEF = 0.01
# What a turn's candidates_left counts (before the turn's answer) depends on the guesser. The
# information-gain guesser counts the words that fit every answer: the count only falls. The
# natural guesser counts the words within natural.SHOWN of its likeliest word: an answer that makes
# the likeliest word less likely brings more words within that bound, so the count can grow
# after an answer (a Yes too). Shown under its own name, not as "left".
CANDIDATES_LEFT = {
    "label": "Candidates left",
    "caption": "Candidates the guesser had left",
    "axis": "candidates",
    "help": "The words that fit every answer so far, as the guesser's knowledge base reads them "
    "(counted before each answer): the count only falls.",
}
LIKELY_CANDIDATES = {
    "label": "Likely candidates",
    "caption": "Likely candidates: the words the guesser held likely",
    "axis": "likely candidates",
    "help": "The words the guesser holds at least 1/"
    f"{round(1 / natural_guesser.SHOWN):,} as likely as its likeliest word (counted before each "
    "answer). This is not a count of the words still possible: an answer that makes the likeliest "
    "word less likely brings more words within that bound, so the count can grow after an answer.",
}
SOFT_CANDIDATE_COUNTS = frozenset({ModelKind.NATURAL})


def game_get(*, game_id: int) -> Game | None:
    return (
        Game.objects.select_related("guesser", "judge", "player", "word_list", "job")
        .filter(pk=game_id)
        .first()
    )


def game_turns(game: Game) -> QuerySet[Turn]:
    return game.turns.select_related("judged_by").order_by("index")


def secret_visible(game: Game, visitor: Visitor | None) -> bool:
    """Everyone sees the secret once a game is over; while it runs only the person judging it."""
    if game.status != GameStatus.PLAYING:
        return True
    return game.mode == GameMode.HUMAN_JUDGE and visitor is not None and visitor.can_continue(game)


def pool_guessers(guessers) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """The guessers that know only a word pool (shipped trained guessers: options.pool_word_list)
    with that pool's name, size and their measured held-out success; and each pool's words."""
    notes, pools = {}, {}
    for spec in guessers:
        name = (spec.options or {}).get("pool_word_list")
        word_list = word_list_latest(name) if name else None
        if word_list is None:
            continue
        if name not in pools:
            pools[name] = list(
                word_list.entries.order_by("word__text").values_list("word__text", flat=True)
            )
        success = (spec.options.get("held_out_success") or {}).get("rate")
        notes[spec.name] = {
            "pool": name,
            "size": len(pools[name]),
            "success": None if success is None else round(100 * success, 1),
        }
    return notes, pools


def new_game_choices() -> dict:
    guessers = list(model_specs_to_play("guesser"))
    notes, pools = pool_guessers(guessers)
    for spec in guessers:
        spec.pool_note = notes.get(spec.name)
    return {
        "judges": list(model_specs_for("judge")),
        "guessers": guessers,
        "pool_notes": notes,
        "pools": pools,
        "first_pool": next(iter(pools), ""),
        "word_lists": [wl.name for wl in word_list_summaries()],
        "default_judge": default_judge(),
        "default_guesser": DEFAULT_GUESSER,
        "default_word_list": DEFAULT_WORD_LIST,
        "max_turns_limit": MAX_TURNS_LIMIT,
    }


def game_play_context(game: Game, visitor: Visitor) -> dict:
    """Everything the game page and its htmx fragments show."""
    turns = list(game_turns(game))
    for turn in turns:
        turn.rule_note = rule_note(turn)
        turn.belief_top = informative_belief(turn.top_candidates)
    max_turns = int((game.config or {}).get("max_turns", 20))
    over = game.status != GameStatus.PLAYING
    helper = question_helper(game)
    pending = (game.state or {}).get("pending") if not over else None
    owner = visitor.can_continue(game)
    return {
        "game": game,
        "turns": turns,
        "pending": pending,
        "over": over,
        "max_turns": max_turns,
        "turns_left": max(0, max_turns - game.n_turns),
        "next_index": game.n_turns,
        "can_continue": visitor.can_continue(game) and not over,
        "is_owner": visitor.can_continue(game),
        "person_asks": game.mode == GameMode.HUMAN_GUESSER,
        "person_judges": game.mode == GameMode.HUMAN_JUDGE,
        "show_secret": secret_visible(game, visitor),
        "needs_secret": over
        and game.mode == GameMode.HUMAN_JUDGE
        and not game.secret
        and visitor.can_continue(game),
        "kb_check": (game.state or {}).get("kb_check"),
        "suggests": helper is not None,
        "judge_reads_any_question": helper is not None and game.judge.kind != ModelKind.KB,
        "kb_forms": helper.forms() if helper is not None and not over else [],
        "has_candidates": any(t.top_candidates for t in turns),
        "answer_labels": ANSWER_LABELS,
        "win_rule": (game.config or {}).get("win_rule", "reference"),
        # "That's my word" only for a guess of one plausible word (games.rules.guessed_word)
        "pending_guess": (
            rules.guessed_word(pending["question"]) if pending and not game.secret else None
        ),
        "can_undo": owner and services.undoable_turn(game) is not None,
        "awaiting_first": awaits_first_question(game),
        "confirm_word": confirm_word(game, turns),
        "candidates": candidates_meaning(game),
        "play_again": play_again_fields(game, max_turns) if over else None,
    }


def candidates_meaning(game: Game) -> dict:
    """What the game's "candidates" numbers count, by its guesser: CANDIDATES_LEFT or
    LIKELY_CANDIDATES ({"label", "caption", "axis", "help"})."""
    guesser = game.guesser
    soft = guesser is not None and guesser.kind in SOFT_CANDIDATE_COUNTS
    return LIKELY_CANDIDATES if soft else CANDIDATES_LEFT


def confirm_word(game: Game, turns: list[Turn]) -> str:
    """The word the winning guess named ("Is it a canoe?": "canoe"), to fill the box where the
    person confirms their word after "That's my word!"; "" where no word is to be confirmed."""
    if game.secret or game.outcome != GameOutcome.WON or not turns:
        return ""
    question = turns[-1].question
    if rules.guessed_word(question) is None:
        return ""
    return rules.guessed_things(question)[0][0]


def play_again_fields(game: Game, max_turns: int) -> dict | None:
    """The start form's fields (webapp.play.forms.GameStartForm) of a new game of the same kind
    as `game`: the same role, the same opponent and questions allowed, and the same word list
    where the word was drawn from one. A word the person picked from a pool is not picked again:
    the new game lets them think of one. None for a model-vs-model game."""
    source = (game.state or {}).get("secret_source")
    if game.mode == GameMode.HUMAN_GUESSER:
        fields = {"role": services.ROLE_GUESSER, "judge": game.judge.name if game.judge else ""}
        fields["word_list"] = game.word_list.name if game.word_list else ""
    elif game.mode == GameMode.HUMAN_JUDGE:
        fields = {
            "role": services.ROLE_ANSWERER,
            "guesser": game.guesser.name if game.guesser else "",
        }
        if source == "word_list" and game.word_list:
            fields.update(draw_word="on", word_list=game.word_list.name)
    else:
        return None
    fields["max_turns"] = max_turns
    return fields


def informative_belief(top_candidates) -> list | None:
    """A turn's top candidates (the guesser's belief before the answer) where its top word holds
    more than INFORMATIVE_BELIEF; None while the belief is near uniform."""
    if not top_candidates or max(p for _, p in top_candidates) <= INFORMATIVE_BELIEF:
        return None
    return top_candidates


# -- the trajectory browser ----------------------------------------------------------------------
# A game's outcome is the guesser's (won: it named the word). Where a model asks and a person
# answers, the game lists show the person's side instead: the model's loss is the person's win.
PERSON_ANSWERS_OUTCOMES = {
    GameOutcome.WON: ("model found the word", "lost"),
    GameOutcome.LOST: ("stumped the model", "won"),
}


def outcome_shown(game: Game) -> dict:
    """How a game list shows a game's outcome, from the person's side in people's games:
    {"label": words, "tone": the outcome its badge is coloured as}. A game a person asks in or a
    model-vs-model game: the guesser's outcome (the person is the guesser, or no person plays)."""
    if game.mode == GameMode.HUMAN_JUDGE and game.outcome in PERSON_ANSWERS_OUTCOMES:
        label, tone = PERSON_ANSWERS_OUTCOMES[game.outcome]
        return {"label": label, "tone": tone}
    return {"label": game.get_outcome_display(), "tone": game.outcome}


# what /games/ lists: bare /games/ shows people's games (see views.game_list)
SHOW_CHOICES = [
    ("people", "people's games"),
    ("all", "all games, models' too"),
    ("models", "models' games only"),
]
GAME_FILTERS = {
    "job": "job_id",
    "word_list": "word_list__name",
    "guesser": "guesser__name",
    "judge": "judge__name",
    "outcome": "outcome",
    "mode": "mode",
}


def games_filtered(games: QuerySet[Game], **values) -> QuerySet[Game]:
    """`games` narrowed by each filter of GAME_FILTERS given a value (models and word lists by
    name); an empty string or None is no filter."""
    return games.filter(
        **{
            GAME_FILTERS[name]: value
            for name, value in values.items()
            if value is not None and value != ""
        }
    )


def without_running_battles(games: QuerySet[Game]) -> QuerySet[Game]:
    """`games` without those of an Arena battle still going: they would name its anonymous
    guessers before the end (webapp.arena)."""
    return games.exclude(battle_as_a__isnull=False, battle_as_a__finished_at__isnull=True).exclude(
        battle_as_b__isnull=False, battle_as_b__finished_at__isnull=True
    )


def in_running_battle(game: Game) -> bool:
    return not without_running_battles(Game.objects.filter(pk=game.pk)).exists()


def game_list(
    *,
    player: str = "",
    guesser: str = "",
    judge: str = "",
    word: str = "",
    word_list: str = "",
    outcome: str = "",
    mode: str = "",
    job: int | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    show: str = "all",
) -> QuerySet[Game]:
    """Games newest first, narrowed by each filter given. `show`: "people" (games a person played),
    "models" (model-vs-model games) or "all". Player and word match case-insensitively and in
    part; player "guest" means the games a guest played (never model-vs-model games)."""
    games = Game.objects.select_related("guesser", "judge", "player", "word_list").order_by(
        "-created_at", "-pk"
    )
    games = without_running_battles(games)
    games = games_filtered(
        games,
        guesser=guesser,
        judge=judge,
        word_list=word_list,
        outcome=outcome,
        mode=mode,
        job=job,
    )
    if show == "people":
        games = games.exclude(mode=GameMode.MODEL_VS_MODEL)
    elif show == "models":
        games = games.filter(mode=GameMode.MODEL_VS_MODEL)
    player = player.strip()
    if player.lower() == "guest":
        games = games.filter(player__isnull=True).exclude(mode=GameMode.MODEL_VS_MODEL)
    elif player:
        games = games.filter(player__username__icontains=player)
    if word.strip():  # a running game's secret is not searchable: that would reveal it
        games = games.filter(secret__icontains=word.strip()).exclude(status=GameStatus.PLAYING)
    if date_from:
        games = games.filter(created_at__date__gte=date_from)
    if date_to:
        games = games.filter(created_at__date__lte=date_to)
    return games


def _spec_names(roles) -> list[str]:
    """Every model spec of these roles, active or not (old games name them too)."""
    return list(ModelSpec.objects.filter(role__in=roles).values_list("name", flat=True))


def filter_choices() -> dict:
    return {
        "guessers": _spec_names(ModelRole.able_to("guesser")),
        "judges": _spec_names(ModelRole.able_to("judge")),
        "word_lists": [wl.name for wl in word_list_summaries()],
        "outcomes": GameOutcome.choices,
        "modes": GameMode.choices,
        "shows": SHOW_CHOICES,
    }


def turn_chart_data(turns: list[Turn], candidates: dict = CANDIDATES_LEFT) -> dict:
    """Per-turn series for the charts (None where a value is unknown); `candidates`: what the
    candidate counts mean (candidates_meaning), for the chart's labels."""
    parts = sorted({name for t in turns for name in (t.reward or {})})
    return {
        "candidates_label": candidates["label"].lower(),
        "candidates_axis": candidates["axis"],
        "labels": [f"Q{t.index + 1}" for t in turns],
        "questions": [t.question[:120] for t in turns],
        "belief": [t.belief for t in turns],
        "delta_belief": [t.delta_belief for t in turns],
        "candidates_left": [t.candidates_left for t in turns],
        "reward_parts": {
            name: [float((t.reward or {}).get(name, 0.0)) for t in turns] for name in parts
        },
        "has_belief": any(t.belief is not None or t.delta_belief is not None for t in turns),
        "has_candidates": any(t.candidates_left is not None for t in turns),
        "candidates_emptied": candidates_emptied(turns),
    }


def candidates_emptied(turns: list[Turn]) -> dict | None:
    """Where the guesser's candidate set first went empty: {"index", "question", "verdict"} of the
    answer after which no word fitted every answer (a turn's candidates_left is counted before its
    own answer); None if it never did."""
    for before, turn in zip([None, *turns], turns):
        if turn.candidates_left == 0:
            if before is None:
                return None  # empty before any answer: nothing to explain it by
            return {"index": before.index, "question": before.question, "verdict": before.verdict}
    return None


def game_export(game: Game, visitor: Visitor | None) -> dict:
    """The games.Trajectory dict plus ids and provenance (the secret stays hidden while a game
    runs)."""
    rows = list(game_turns(game))
    data = trajectory_of(game).to_dict()
    visible = secret_visible(game, visitor)
    for turn, row in zip(data["turns"], rows):
        turn.update(
            id=row.pk,
            judged_by=row.judged_by.get_username() if row.judged_by else None,
            created_at=row.created_at.isoformat(),
        )
        if not visible:
            turn["judge_raw"] = ""  # a model judge's text may name the secret
        if game.status == GameStatus.PLAYING:
            turn["top_candidates"] = None  # the guesser's candidates would point at the secret
    if not visible:
        data["secret"] = None
    data.update(
        id=game.pk,
        public_id=str(game.public_id),
        url=reverse("play:game-detail", args=[game.pk]),
        mode=game.mode,
        status=game.status,
        n_turns=game.n_turns,
        player=game.player.get_username() if game.player else None,
        guest=game.player_id is None,
        word_list=str(game.word_list) if game.word_list else None,
        job=game.job_id,
        sample_index=game.sample_index,
        created_at=game.created_at.isoformat(),
        finished_at=game.finished_at.isoformat() if game.finished_at else None,
        secret_source=(game.state or {}).get("secret_source"),
        kb_check=(game.state or {}).get("kb_check"),
    )
    return data


# -- players ---------------------------------------------------------------------------------
def player_stats(*, user) -> dict:
    """One player's finished games by role. Where the person asks (`as_guesser`), a win is theirs;
    where a model asks and the person answers (`as_answerer`), a win is the model's (it found the
    person's word), so it is never counted as the person's, and it counts only once the word is
    known (`unconfirmed`: "That's my word" pressed, the word never typed). `games`, the win rate
    and the means count decided games (won or lost), as the people's board does: a game given up
    is a loss for no one. `all` counts finished games only."""
    games = Game.objects.filter(player=user)
    ended = games.exclude(status=GameStatus.PLAYING)
    unconfirmed = Q(mode=GameMode.HUMAN_JUDGE, outcome=GameOutcome.WON, secret="")
    decided = Q(outcome__in=(GameOutcome.WON, GameOutcome.LOST)) & ~unconfirmed
    won = decided & Q(outcome=GameOutcome.WON)

    def summary(qs) -> dict:
        row = qs.aggregate(
            games=Count("pk", filter=decided),
            wins=Count("pk", filter=won),
            abandoned=Count("pk", filter=Q(outcome=GameOutcome.ABANDONED)),
            unconfirmed=Count("pk", filter=unconfirmed),
            mean_questions=Avg("n_turns", filter=decided),
            mean_questions_won=Avg("n_turns", filter=won),
        )
        row["win_rate"] = row["wins"] / row["games"] if row["games"] else None
        return row

    return {
        "all": {"games": ended.count()},
        "as_guesser": summary(ended.filter(mode=GameMode.HUMAN_GUESSER)),
        "as_answerer": summary(ended.filter(mode=GameMode.HUMAN_JUDGE)),
        "playing": games.filter(status=GameStatus.PLAYING).count(),
    }


def player_games(*, user) -> QuerySet[Game]:
    return game_list().filter(player=user)


def turn_announcement(context: dict) -> str:
    """One sentence for the visible aria-live region after an action: what was just answered, or
    how the game ended (the guesser's next question is in the panel, and announced apart)."""
    game, turns = context["game"], context["turns"]
    parts = []
    if turns:
        last = turns[-1]
        label = ANSWER_LABELS.get(last.verdict, last.verdict)
        who = "You answered" if last.extra.get("judge") == "human" else "Answer"
        who += " (rule)" if last.decided_by_rules else ""
        note = f" {rule_note(last)}".rstrip()
        parts.append(f"Question {last.index + 1}: “{last.question[:200]}” — {who}: {label}.{note}")
    if context["over"]:
        you = context["person_asks"]
        if game.outcome == GameOutcome.WON:
            parts.append(
                "You named the word: you won!" if you else "The guesser named your word: it won."
            )
        elif game.outcome == GameOutcome.LOST:
            parts.append(
                "No questions left: you lost." if you else "No questions left: the guesser lost."
            )
        else:
            parts.append("The game was given up.")
        if context["show_secret"] and game.secret:
            parts.append(f"The word was “{game.secret}”.")
        elif context["needs_secret"]:
            parts.append("Please type your word to finish.")
    return " ".join(parts)  # the guesser's next question is announced apart (game_panel.html)
