"""Arena battles: start one (two anonymous guessers drawn by fewest meetings), answer a side,
finish with the person's word, give up; exclude a person's battles.

A battle is two games of "The model asks" (webapp.play) on the word the person holds, played
through play's services, so every rule, turn and vote is stored as in any game. The outcome comes
from games.arena.battle_outcome once both games are over and the word is known; until then (and
after giving up) the battle counts nowhere.
"""

from __future__ import annotations

import random
from collections import Counter

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from games import rules
from games.arena import TIE, battle_outcome, draw_pair
from games.judges.base import UnknownSecretError
from games.types import GameConfig
from webapp.arena.models import ArenaExclusion, Battle
from webapp.catalog.models import ModelKind, ModelSpec
from webapp.catalog.selectors import model_specs_to_play, word_list_latest
from webapp.core.exceptions import ApplicationError
from webapp.core.ratelimit import RateLimitUnavailable, window_hit
from webapp.play import services as play
from webapp.play.models import Game, GameOutcome, GameStatus
from webapp.play.suggestions import kb_judge
from webapp.play.visitors import Visitor

SIDES = ("a", "b")
START_LIMIT = (20, 3600)  # battles a person may start per window (seconds); ARENA_START_LIMIT
START_LIMIT_MESSAGE = "You have started many battles in a short time; wait a while and try again."
_rng = random.SystemRandom()


# -- who plays ---------------------------------------------------------------------------------
def arena_guessers() -> list[ModelSpec]:
    """The guessers a battle draws from: those play offers to play against ("The model asks"),
    so training bases such as the untrained tiny-llama are left out."""
    return list(model_specs_to_play("guesser").order_by("name"))


def pair_meetings() -> Counter:
    """How often each pair of guessers has met, over every stored battle (finished or not)."""
    rows = (
        Battle.objects.order_by()
        .values("guesser_a__name", "guesser_b__name")
        .annotate(n=Count("id"))
    )
    meetings: Counter = Counter()
    for r in rows:  # (a, b) and (b, a) are separate rows of the same pair
        meetings[frozenset((r["guesser_a__name"], r["guesser_b__name"]))] += r["n"]
    return meetings


def start_allowed(visitor: Visitor) -> bool:
    """Count one battle start of this person against ARENA_START_LIMIT (per user or guest)."""
    limit, window = getattr(settings, "ARENA_START_LIMIT", START_LIMIT)
    who = f"user:{visitor.user.pk}" if visitor.user is not None else f"guest:{visitor.guest_key}"
    try:
        allowed, _ = window_hit("arena_start", who, limit, window)
    except RateLimitUnavailable as err:
        raise ApplicationError(
            "Battles are paused for a moment (the rate limiter cannot be reached).", status=503
        ) from err
    return allowed


# -- a battle ----------------------------------------------------------------------------------
def battle_start(*, visitor: Visitor, word_list: str | None = None, rng=None) -> Battle:
    """A new battle: two guessers by fewest meetings (sides at random), each game's first question
    asked. With `word_list` the word is drawn from it (and shown to the person); else the person
    keeps it to themselves and types it at the end."""
    if not start_allowed(visitor):
        raise ApplicationError(START_LIMIT_MESSAGE, status=429)
    specs = {s.name: s for s in arena_guessers()}
    if len(specs) < 2:
        raise ApplicationError("The arena needs at least two active guessers.", status=503)
    secret, allowed, named = None, None, {}
    if word_list:  # a pair meets only on a word one of them can name (else a certain tie)
        words = list(play._word_list(word_list).entries.values_list("word__text", flat=True))
        named = {n: {w for w in words if namer(spec)(w)} for n, spec in specs.items()}

        def allowed(pair):
            return any(named[n] for n in pair)

    try:
        name_a, name_b = draw_pair(list(specs), pair_meetings(), rng or _rng, allowed)
    except ValueError as err:
        raise ApplicationError(
            "No guesser can name a word of this list; pick another list or keep your own word."
        ) from err
    if word_list:
        secret = play.draw_secret(sorted(named[name_a] | named[name_b]), None)
    games: list[Game] = []
    try:
        for side, name in zip(SIDES, (name_a, name_b)):
            games.append(_side_start(visitor, side, name, secret, (name_a, name_b)))
        return Battle.objects.create(
            game_a=games[0],
            game_b=games[1],
            guesser_a=specs[name_a],
            guesser_b=specs[name_b],
            player=visitor.user,
            guest_key=visitor.guest_key,
            word_source="word_list" if secret else "kept",
            word=secret or "",
        )
    except BaseException:  # half a battle counts nowhere: its started game must not linger
        Game.objects.filter(pk__in=[g.pk for g in games]).delete()
        raise


def _side_start(
    visitor: Visitor, side: str, guesser: str, secret: str | None, names: tuple[str, str]
) -> Game:
    """One side's game with its first question asked; neither guesser of the battle (`names`) is
    named in a refusal."""
    try:
        return play.game_start(
            visitor=visitor, role=play.ROLE_ANSWERER, guesser=guesser, secret=secret
        )
    except ApplicationError as err:
        if err.status < 500:
            raise _unnamed(err, names) from err
        raise ApplicationError(
            f"Guesser {side.upper()} failed to ask its first question; start a battle again in "
            "a moment.",
            status=err.status,
        ) from err


def battle_get(public_id, visitor: Visitor) -> Battle:
    """The battle if this visitor is its person (else 403/404)."""
    battle = (
        Battle.objects.select_related("game_a", "game_b", "guesser_a", "guesser_b")
        .filter(public_id=public_id)
        .first()
    )
    if battle is None:
        raise ApplicationError("There is no such battle.", status=404)
    if not visitor.can_continue(battle.game_a):
        raise ApplicationError("This battle belongs to someone else.", status=403)
    return battle


def side_game(battle: Battle, side: str) -> Game:
    if side not in SIDES:
        raise ApplicationError("Answer side a or side b.")
    return battle.game_a if side == "a" else battle.game_b


def battle_answer(
    *, public_id, visitor: Visitor, side: str, verdict: str, expected_index: int
) -> Battle:
    """The person's answer to one side's pending question (play's answer_submit)."""
    battle = battle_get(public_id, visitor)
    if battle.abandoned or battle.finished:
        raise ApplicationError("This battle is over.", status=409)
    game = side_game(battle, side)
    try:
        play.answer_submit(
            game_id=game.pk, visitor=visitor, verdict=verdict, expected_index=expected_index
        )
    except ApplicationError as err:
        raise _blinded(err, battle, side) from err
    battle = battle_get(public_id, visitor)
    if battle.word and games_over(battle):  # a drawn word: nothing to type, the battle ends
        _finish(battle, battle.word)
    return battle


def _blinded(err: ApplicationError, battle: Battle, side: str) -> ApplicationError:
    """play's refusal without the battle's guesser names: a failing guesser's error names it (and
    its details may name the model it runs), so that one is told in general words."""
    if err.status >= 500:
        return ApplicationError(
            f"Guesser {side.upper()} failed to ask its next question (your answer was not "
            "stored); answer again in a moment.",
            status=err.status,
        )
    return _unnamed(err, (battle.guesser_a.name, battle.guesser_b.name))


def _unnamed(err: ApplicationError, names) -> ApplicationError:
    """play's refusal with each of the battle's guesser names replaced by "the guesser"."""
    message = err.message
    for name in names:
        message = message.replace(name, "the guesser")
    return ApplicationError(message, extra=err.extra, status=err.status)


def games_over(battle: Battle) -> bool:
    return all(g.status != GameStatus.PLAYING for g in (battle.game_a, battle.game_b))


def battle_finish(*, public_id, visitor: Visitor, word: str) -> Battle:
    """Both games over: the person names their word; each side's win is checked against it (a
    winning question must name it), each game gets it, and the outcome is stored."""
    battle = battle_get(public_id, visitor)
    if battle.abandoned or battle.finished:
        raise ApplicationError("This battle is already over.", status=409)
    if not games_over(battle):
        raise ApplicationError("Answer both sides until each game ends first.", status=409)
    word = play._clean_secret(word)
    for side in SIDES:
        game = side_game(battle, side)
        _check_named(side, game, word)
    for game in (battle.game_a, battle.game_b):
        if not game.secret:
            play.game_confirm_secret(game_id=game.pk, visitor=visitor, secret=word)
    return _finish(battle_get(public_id, visitor), word)


def _check_named(side: str, game: Game, word: str) -> None:
    if game.secret and game.secret != word:
        raise ApplicationError(f"Side {side.upper()} already has the word “{game.secret}”.")
    if game.outcome != GameOutcome.WON:
        return
    last = game.turns.order_by("-index").values_list("question", flat=True).first() or ""
    config = GameConfig.from_dict(game.config)
    if not rules.wins(last, word, config.win_rule, config):
        raise ApplicationError(
            f"You told {side.upper()} “That's my word!” on “{last}”, which does not name "
            f"“{word}”: type the word that question names."
        )


def _finish(battle: Battle, word: str) -> Battle:
    a, b = Game.objects.get(pk=battle.game_a_id), Game.objects.get(pk=battle.game_b_id)
    with transaction.atomic():
        battle = Battle.objects.select_for_update().get(pk=battle.pk)
        if battle.finished or battle.abandoned:  # (given up meanwhile: that end stands)
            return battle
        if a.status == GameStatus.ABANDONED or b.status == GameStatus.ABANDONED:
            battle.abandoned = True
        else:
            battle.outcome = battle_outcome(a.won, a.n_turns, b.won, b.n_turns)
        battle.word, battle.word_in_kb = word, kb_knows(word)
        # a tie on a word neither side could name was certain: it counts nowhere (selectors)
        battle.word_nameable = battle.outcome not in ("", TIE) or any(
            namer(spec)(word) for spec in (battle.guesser_a, battle.guesser_b)
        )
        battle.finished_at = timezone.now()
        battle.save()
    return battle


def battle_abandon(*, public_id, visitor: Visitor) -> Battle:
    """Give up: the games still going end as abandoned and the battle counts nowhere."""
    battle = battle_get(public_id, visitor)
    if battle.finished or battle.abandoned:
        raise ApplicationError("This battle is already over.", status=409)
    for game in (battle.game_a, battle.game_b):
        if game.status == GameStatus.PLAYING:
            play.game_abandon(game_id=game.pk, visitor=visitor)
    ended = Battle.objects.filter(pk=battle.pk, outcome="", abandoned=False)
    if not ended.update(abandoned=True, finished_at=timezone.now()):  # finished meanwhile
        raise ApplicationError("This battle is already over.", status=409)
    return battle_get(public_id, visitor)


def namer(spec: ModelSpec):
    """word -> whether the guesser `spec` can name it: one that knows only a word pool
    (options.pool_word_list) its pool's words, a knowledge-base guesser (infogain, random) the
    knowledge base's nouns, the natural guesser its pool's words, any other any word."""
    pool = (spec.options or {}).get("pool_word_list")
    word_list = word_list_latest(pool) if pool else None
    if word_list is not None:
        return set(word_list.entries.values_list("word__text", flat=True)).__contains__
    if spec.kind in ModelKind.POOL_GUESSERS:
        judge = kb_judge()  # built once for a whole word list
        return lambda word: kb_knows(word, judge)
    if spec.kind == ModelKind.NATURAL:
        from games.guessers.natural import load_data

        data = load_data(spec.path or None)
        return lambda word: data.word_id(word) is not None
    return lambda word: True


def kb_knows(word: str, judge=None) -> bool:
    """Whether the knowledge base has the word (an unknown word is kept and flagged)."""
    try:
        (judge or kb_judge()).check_secret(word)
    except UnknownSecretError:
        return False
    return True


# -- exclusions --------------------------------------------------------------------------------
def person_exclude(*, by, user=None, guest_key: str = "", reason: str = "") -> ArenaExclusion:
    """Leave a person's battles (past and future) out of the ratings, recording who and when."""
    _one_person(user, guest_key)
    current = exclusion_active(user=user, guest_key=guest_key)
    if current is not None:
        return current
    return ArenaExclusion.objects.create(
        player=user,
        guest_key=guest_key if user is None else "",
        reason=reason[:300],
        excluded_by=by,
    )


def person_include(*, by, user=None, guest_key: str = "") -> int:
    """Lift a person's exclusion (the record stays, with who lifted it and when)."""
    _one_person(user, guest_key)
    return active_exclusions(user=user, guest_key=guest_key).update(
        lifted_by=by, lifted_at=timezone.now()
    )


def _one_person(user, guest_key: str) -> None:
    # neither would match every user's exclusion (their guest key is "")
    if (user is None) == (not guest_key):
        raise ApplicationError("Name one person: a user or a guest key.")


def active_exclusions(user=None, guest_key: str = ""):
    rows = ArenaExclusion.objects.filter(lifted_at__isnull=True)
    return rows.filter(player=user) if user is not None else rows.filter(guest_key=guest_key)


def exclusion_active(*, user=None, guest_key: str = "") -> ArenaExclusion | None:
    return active_exclusions(user=user, guest_key=guest_key).first()
