"""Playing in the browser and through the API: the one place that writes live games and turns.

Each request rebuilds the engine (and a model guesser's state) from the stored turns; only JSON
is kept between requests (`Game.state["pending"]` holds the question a person must answer).
Models (judges, guessers) are called outside any transaction: a turn reads the game, computes,
then stores inside a short transaction with the game row locked, where `expected_index` is checked
again, so a slow model holds no lock and a repeated submission of the same turn is harmless (409).
All rules come from games.engine.TwentyQuestions.
"""

from __future__ import annotations

import logging
import secrets as secrets_module
import time
from collections.abc import Sequence
from functools import partial

from django.db import transaction
from django.utils import timezone

from games import rules
from games.base_models import BaseModelError
from games.judges.base import Judge, JudgeRequest, UnknownSecretError
from games.judges.cross_encoder import PretrainedJudgeError
from games.judges.learned import WeightsError
from games.types import GameConfig, JudgeAnswer, Verdict
from webapp.accounts.roles import is_researcher
from webapp.catalog import builders
from webapp.catalog.models import Word, WordList
from webapp.catalog.selectors import ModelSpecUnavailable, model_spec_active, word_list_latest
from webapp.core.exceptions import ApplicationError
from webapp.labelling.models import JudgeVote
from webapp.play.judge_checks import (
    KB_JUDGE,
    LEARNED_JUDGE,
    PRETRAINED_JUDGE,
    judge_check,
)
from webapp.play.judge_checks import build_model as _build
from webapp.play.models import Game, GameMode, GameOutcome, GameStatus, Turn
from webapp.play.moves import (
    HumanVerdict,
    annotate,
    apply_plan,
    ended_plan,
    engine_of,
    guesser_plan,
    ms_since,
    store_turn,
)
from webapp.play.records import trajectory_of
from webapp.play.visitors import Visitor

ROLE_GUESSER, ROLE_ANSWERER = "guesser", "answerer"  # the person's role in the game
ROLES = (ROLE_GUESSER, ROLE_ANSWERER)
DEFAULT_GUESSER, DEFAULT_WORD_LIST = "natural", "dbrl/paper_test"
DEFAULT_JUDGES = (PRETRAINED_JUDGE, LEARNED_JUDGE)  # default_judge: the first that loads, else kb
MAX_TURNS_LIMIT = 50
HUMAN_VERDICTS = (Verdict.YES, Verdict.NO, Verdict.UNKNOWN, Verdict.INVALID, Verdict.FINISHED)
MAX_DRAW_TRIES = 200
# People play under the strict win rule (games.rules): a guess names one thing, a question listing
# several is invalid, a guess of another thing is No. Model games keep the rule of their job.
PEOPLE_WIN_RULE = "strict"

_rng = secrets_module.SystemRandom()
log = logging.getLogger(__name__)


# -- public services -------------------------------------------------------------------------
def game_start(
    *,
    visitor: Visitor,
    role: str,
    guesser: str | None = None,
    judge: str | None = None,
    word_list: str | None = None,
    secret: str | None = None,
    max_turns: int | None = None,
    ask_first: bool = True,
) -> Game:
    """A new game. As `guesser` the person asks and a model judges a secret drawn from a word list;
    as `answerer` a model asks about the person's word (typed, drawn, or kept to themselves), its
    first question asked now, or with `ask_first=False` later by
    webapp.play.first_question.game_first_question (the page shows progress meanwhile instead of
    waiting for a slow model)."""
    config = _config(max_turns)
    game = Game(
        player=visitor.user,
        guest_key=visitor.guest_key,
        config=config.to_dict(),
        seed=_rng.randrange(2**31),
    )
    if role == ROLE_GUESSER:
        game.mode, game.judge = (
            GameMode.HUMAN_GUESSER,
            model_spec_active(judge or default_judge(), "judge"),
        )
        judge_model = _build(partial(builders.judge_for, one_row=True), game.judge)
        if secret:
            if not is_researcher(visitor.user):
                raise ApplicationError(
                    "Only researchers may choose the secret of a game they ask about.", status=403
                )
            game.secret, source = _clean_secret(secret), "chosen"
            _check_judge_knows(judge_model, game.secret)
            game.word_list = _word_list(word_list) if word_list else None
        else:
            game.word_list = _word_list(word_list or DEFAULT_WORD_LIST)
            game.secret, source = draw_secret(_words_of(game.word_list), judge_model), "word_list"
    elif role == ROLE_ANSWERER:
        game.mode, game.guesser = (
            GameMode.HUMAN_JUDGE,
            model_spec_active(guesser or DEFAULT_GUESSER, "guesser"),
        )
        if not game.guesser.published and not is_researcher(visitor.user):
            raise ApplicationError(  # a researcher may try an unpublished checkpoint
                f"{game.guesser.name} is not offered to players yet.", status=403
            )
        if secret:
            game.secret, source = _clean_secret(secret), "player"
        elif word_list:
            game.word_list = _word_list(word_list)
            game.secret, source = draw_secret(_words_of(game.word_list), None), "word_list"
        else:
            source = "unconfirmed"  # the person confirms their word when the game ends
    else:
        raise ApplicationError(
            f"Unknown role {str(role)[:40]!r}: choose guesser (you ask) or answerer (you judge)."
        )
    game.state = {"secret_source": source}
    game.word = Word.objects.filter(text=game.secret).first() if game.secret else None
    game.full_clean(
        exclude=[] if game.secret else ["secret"]
    )  # a kept word is confirmed at the end
    asks_now = ask_first and game.mode == GameMode.HUMAN_JUDGE
    plan = guesser_plan(game, []) if asks_now else None
    with transaction.atomic():
        game.save()
        if plan is not None:
            apply_plan(game, plan)
            game.save()
    return game


def turn_submit(*, game_id: int, visitor: Visitor, question: str, expected_index: int) -> Turn:
    """The person's next question in a game they guess; the game's model judge answers it."""
    game = _game_for_turn(game_id, visitor, GameMode.HUMAN_GUESSER, expected_index, lock=False)
    judge = _build(partial(builders.judge_for, one_row=True), game.judge)  # one question
    env = engine_of(game, judge, trajectory_of(game).turns)
    result = env.step(question if isinstance(question, str) else "")  # the judge: no lock held
    result.turn.extra["judge"] = game.judge.name
    with transaction.atomic():
        game = _game_for_turn(game_id, visitor, GameMode.HUMAN_GUESSER, expected_index)
        row = store_turn(game, env, result.turn)
        game.save()
    return row


def answer_submit(*, game_id: int, visitor: Visitor, verdict: str, expected_index: int) -> Turn:
    """The person's verdict on the model guesser's pending question (`finished`: "That's my
    word")."""
    game = _game_for_turn(game_id, visitor, GameMode.HUMAN_JUDGE, expected_index, lock=False)
    verdict = _human_verdict(verdict)
    pending = game.state.get("pending")
    if not pending or pending.get("index") != game.n_turns:
        raise ApplicationError("No question is waiting for an answer; reload the game.", status=409)
    turns = trajectory_of(game).turns
    env = engine_of(game, HumanVerdict(), turns)
    question = pending["question"]
    request = env.prejudge(question)
    answer, judged_by_person = None, isinstance(request, JudgeRequest)
    if judged_by_person:
        raw = f"human:{visitor.name}"
        if verdict is Verdict.FINISHED:
            if game.secret:  # a known word: the rules have already checked whether it was named
                raise ApplicationError(
                    f"“{question}” does not name your word “{game.secret}”: answer Yes or No."
                )
            if rules.guessed_thing(question) is None:
                raise ApplicationError(
                    f"“{question}” is not a guess of one word, so it cannot have "
                    "found your word: answer Yes or No."
                )
            if rules.guessed_word(question) is None:
                raise ApplicationError(
                    f"“{question}” asks about a broad category, not a word one keeps in mind: "
                    "answer Yes or No."
                )
            request = JudgeAnswer(
                Verdict.FINISHED, raw=raw
            )  # checked when the person confirms the word
        else:
            answer = JudgeAnswer(verdict, raw=raw)
    latency = ms_since(pending.get("asked_at"))
    turn = env.finish_turn(question, request, answer, latency_ms=latency).turn
    annotate(turn, pending, judge="human" if judged_by_person else "rules")
    # the guesser's next question (or the end-of-game checks): no lock held
    plan = ended_plan(game, env, [*turns, turn]) if env.done else guesser_plan(game, [*turns, turn])
    with transaction.atomic():
        game = _game_for_turn(game_id, visitor, GameMode.HUMAN_JUDGE, expected_index)
        row = store_turn(game, env, turn, judged_by=visitor.user if judged_by_person else None)
        if judged_by_person:
            JudgeVote.objects.create(
                turn=row,
                secret=game.secret,
                question=question[:10_000],
                judge_name=f"human:{visitor.name}"[:100],
                user=visitor.user,
                verdict=turn.verdict.value,
                raw=turn.judge_raw,
            )
        apply_plan(game, plan)
        game.save()
    return row


def game_confirm_secret(*, game_id: int, visitor: Visitor, secret: str) -> Game:
    """The person names the word they judged about once the game is over; it is checked against
    the winning question and compared with the knowledge-base and learned judges' answers."""
    game = visible_game(game_id, visitor)
    word = _confirmable_word(game, secret)
    trajectory = trajectory_of(game)
    check = judge_check(word, trajectory.turns, trajectory.config)  # the judges: no lock held
    with transaction.atomic():
        game = locked_game(game_id, visitor)
        if _confirmable_word(game, secret) != word:
            raise ApplicationError("The game changed meanwhile; reload it.", status=409)
        game.secret = word
        game.word = Word.objects.filter(text=word).first()
        JudgeVote.objects.filter(turn__game=game).update(secret=word)
        game.state["kb_check"] = check  # the key predates the learned judge (kept for clients)
        game.save()
    return game


def _confirmable_word(game: Game, secret: str) -> str:
    if game.mode != GameMode.HUMAN_JUDGE:
        raise ApplicationError("Only games in which you answer have a word to confirm.")
    if game.status == GameStatus.PLAYING:
        raise ApplicationError(
            "Finish the game (or give up) before you confirm your word.", status=409
        )
    if game.secret:
        raise ApplicationError(
            f"The word of this game is already known: “{game.secret}”.", status=409
        )
    word = _clean_secret(secret)
    turns = trajectory_of(game).turns
    config = GameConfig.from_dict(
        game.config
    )  # the winning question names it under the game's rule
    last = turns[-1].question if turns else ""
    if (
        game.outcome == GameOutcome.WON
        and turns
        and not rules.wins(last, word, config.win_rule, config)
    ):
        raise ApplicationError(
            f"Your word must be the one the last question names: “{last}”. "
            "If it does not name your word, undo your answer."
        )
    return word


def answer_undo(*, game_id: int, visitor: Visitor) -> Game:
    """Take back the person's last answer in a game a model asks, until they answer the next
    question: that turn and the ones the rules decided after it are removed, its question waits
    again and a game it ended (e.g. a wrong "That's my word") goes on."""
    with transaction.atomic():
        game = locked_game(game_id, visitor)
        turn = undoable_turn(game)
        if turn is None:
            raise ApplicationError(
                "There is no answer of yours to take back in this game.", status=409
            )
        JudgeVote.objects.filter(turn__game=game, turn__index__gte=turn.index).delete()
        game.turns.filter(index__gte=turn.index).delete()
        extra = dict(turn.extra or {})
        guesser_ms = extra.pop("guesser_ms", None)
        extra.pop("judge", None)
        game.state["pending"] = {
            "index": turn.index,
            "question": turn.question,
            "candidates_left": turn.candidates_left,
            "top_candidates": turn.top_candidates,
            "extra": extra,
            "guesser_ms": guesser_ms,
            "asked_at": time.time(),
        }
        game.state.pop("kb_check", None)
        game.n_turns, game.finished_at = turn.index, None
        game.status, game.outcome = GameStatus.PLAYING, GameOutcome.PLAYING
        game.save()
    return game


def undoable_turn(game: Game) -> Turn | None:
    """The person's last answer if it may still be taken back: in a game a model asks that is
    going on, or that ended without the word confirmed (nothing was checked against it yet)."""
    if game.mode != GameMode.HUMAN_JUDGE or game.status == GameStatus.ABANDONED:
        return None
    if game.status != GameStatus.PLAYING and game.secret:
        return None
    return game.turns.filter(extra__judge="human").order_by("-index").first()


def game_abandon(*, game_id: int, visitor: Visitor) -> Game:
    """Give up: the game ends (the secret is revealed to a guesser)."""
    game = visible_game(game_id, visitor)
    if game.status != GameStatus.PLAYING:
        raise ApplicationError("This game is already over.", status=409)
    plan = ended_plan(game, None, trajectory_of(game).turns)  # the end-of-game checks: no lock held
    with transaction.atomic():
        game = locked_game(game_id, visitor)
        if game.status != GameStatus.PLAYING:
            raise ApplicationError("This game is already over.", status=409)
        if game.n_turns != len(plan.turns_before):
            plan = ended_plan(game, None, trajectory_of(game).turns)  # a turn landed meanwhile
        game.status, game.outcome = GameStatus.ABANDONED, GameOutcome.ABANDONED
        game.finished_at = timezone.now()
        apply_plan(game, plan)
        game.save()
    return game


def default_judge() -> str:
    """The judge of a game a person asks in when they name none: the first of DEFAULT_JUDGES (the
    pretrained judge, then the learned judge: both answer any question) that is registered, active
    and loads, else the knowledge-base judge."""
    for name in DEFAULT_JUDGES:
        try:
            spec = model_spec_active(name, "judge")
        except ModelSpecUnavailable:
            continue
        try:
            builders.judge_for(spec)  # cached once it loads
        except (WeightsError, PretrainedJudgeError, BaseModelError) as err:
            log.warning("the default judge skips %s: %s", name, err)
            continue
        return name
    return KB_JUDGE


def draw_secret(words: Sequence[str], judge: Judge | None) -> str:
    """A random word of the list that the judge can play with."""
    for word in _rng.sample(list(words), min(len(words), MAX_DRAW_TRIES)):
        if judge is None:
            return word
        try:
            judge.check_secret(word)
            return word
        except UnknownSecretError:
            continue
    raise ApplicationError(
        "No word of this word list can be played with this judge; pick another list."
    )


# -- the pieces ------------------------------------------------------------------------------
def _config(max_turns: int | None) -> GameConfig:
    if max_turns is None:
        return GameConfig(win_rule=PEOPLE_WIN_RULE)
    if not 1 <= int(max_turns) <= MAX_TURNS_LIMIT:
        raise ApplicationError(f"A game has between 1 and {MAX_TURNS_LIMIT} questions.")
    return GameConfig(max_turns=int(max_turns), win_rule=PEOPLE_WIN_RULE)


def _word_list(name: str) -> WordList:
    word_list = word_list_latest(name)
    if word_list is None:
        raise ApplicationError(f"There is no word list named “{str(name)[:100]}”.")
    return word_list


def _words_of(word_list: WordList) -> list[str]:
    return list(word_list.entries.values_list("word__text", flat=True))


def _clean_secret(text: str) -> str:
    word = " ".join(rules.words(text or ""))
    if not word or len(word) > 100:
        raise ApplicationError(
            "A secret is a word or short phrase of letters (at most 100 characters)."
        )
    return word


def _check_judge_knows(judge: Judge, secret: str) -> None:
    try:
        judge.check_secret(secret)
    except UnknownSecretError as err:
        raise ApplicationError(f"The judge cannot play with “{secret}”: {err}") from err


def _human_verdict(value: str) -> Verdict:
    try:
        verdict = Verdict(str(value).lower())
    except ValueError:
        verdict = None
    if verdict not in HUMAN_VERDICTS:
        raise ApplicationError(
            "Answer yes, no, unknown (don't know), invalid, or finished (that's my word)."
        )
    return verdict


def locked_game(game_id: int, visitor: Visitor) -> Game:
    """visible_game with its row locked (inside a transaction) until the transaction ends."""
    return visible_game(game_id, visitor, lock=True)


def visible_game(game_id: int, visitor: Visitor, lock: bool = False) -> Game:
    """The game `visitor` may continue: refused (ApplicationError) when there is none (404) or it is
    someone else's (403)."""
    games = Game.objects.select_for_update(of=("self",)) if lock else Game.objects
    game = games.select_related("judge", "guesser").filter(pk=game_id).first()
    if game is None:
        raise ApplicationError(f"There is no game {game_id}.", status=404)
    if not visitor.can_continue(game):
        raise ApplicationError(
            "This game belongs to someone else; start a game of your own.", status=403
        )
    return game


def _game_for_turn(
    game_id: int, visitor: Visitor, mode: str, expected_index: int, lock: bool = True
) -> Game:
    game = visible_game(game_id, visitor, lock=lock)
    if game.mode != mode:
        raise ApplicationError(
            "In this game you answer the model's questions: send a verdict, not a question."
            if game.mode == GameMode.HUMAN_JUDGE
            else "In this game you ask the questions: send a question, not a verdict."
        )
    if game.status != GameStatus.PLAYING:
        raise ApplicationError(
            f"This game is over ({game.outcome} after {game.n_turns} questions); "
            "start a new game to play again.",
            status=409,
        )
    if expected_index != game.n_turns:
        raise ApplicationError(
            f"Question {expected_index + 1} is not the next one: the game is at question "
            f"{game.n_turns + 1}. Reload the game to see its latest state.",
            status=409,
            extra={"n_turns": game.n_turns},
        )
    return game
