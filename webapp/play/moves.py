"""The engine side of a game's turns, shared by the play services: the engine replayed from the
stored turns, a turn stored, a person's answer as a judge, and the model guesser's next move
computed without the database (a `Plan`) then stored in the locked game."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import partial

from django.db import IntegrityError, transaction
from django.utils import timezone

from games.engine import TwentyQuestions
from games.judges.base import Judge, JudgeRequest
from games.types import GameConfig, JudgeAnswer, Outcome
from games.types import Turn as TurnData
from webapp.catalog import builders
from webapp.core.exceptions import ApplicationError
from webapp.play.judge_checks import build_model, judge_check
from webapp.play.models import Game, GameMode, GameStatus, Turn
from webapp.play.records import turn_row

log = logging.getLogger(__name__)
# The engine needs a secret; while a person keeps their word to themselves, "?" stands in for it
# ("?" has no words, so no question can name it: only the person's "That's my word" ends the game).
UNCONFIRMED_SECRET = "?"


class HumanVerdict(Judge):
    """A person's answer to one question, in the engine's judge interface."""

    name = "human"

    def __init__(self, answer: JudgeAnswer | None = None):
        self.answer = answer

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        if self.answer is None:
            raise RuntimeError("no human answer was given")
        return [self.answer for _ in requests]


def engine_of(game: Game, judge: Judge, turns: Sequence[TurnData]) -> TwentyQuestions:
    """The game's engine as it stands: reset, then the stored turns re-applied without judging
    again."""
    env = TwentyQuestions(judge, GameConfig.from_dict(game.config))
    env.reset(game.secret or UNCONFIRMED_SECRET, game.seed)
    for turn in turns:
        env.finish_turn(turn.question, JudgeAnswer(turn.verdict, raw=turn.judge_raw), None)
    return env


def store_turn(game: Game, env: TwentyQuestions, turn: TurnData, judged_by=None) -> Turn:
    row = turn_row(game, turn, judged_by=judged_by)
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError as err:  # a database without row locks let a duplicate through
        raise ApplicationError(
            "This question was already answered; reload the game.", status=409
        ) from err
    game.n_turns = turn.index + 1
    outcome = env.trajectory.outcome
    if outcome is not Outcome.PLAYING:
        game.outcome, game.status, game.finished_at = (
            outcome.value,
            GameStatus.FINISHED,
            timezone.now(),
        )
    return row


@dataclass
class Plan:
    """What the model side does after a turn, computed without the database: the turns the rules
    decide (stored as they are), the question a person must answer next, or the end-of-game
    checks."""

    env: TwentyQuestions | None
    turns_before: list[TurnData]
    decided: list[TurnData] = dc_field(default_factory=list)
    pending: dict | None = None
    kb_check: dict | None = None


def ended_plan(
    game: Game, env: TwentyQuestions | None, turns: list[TurnData], decided: Sequence[TurnData] = ()
) -> Plan:
    """The game ends after `turns` (+ `decided`, to store): the judges' check of a known word."""
    every = [*turns, *decided]
    config = GameConfig.from_dict(game.config)
    checked = game.mode == GameMode.HUMAN_JUDGE and game.secret
    check = judge_check(game.secret, every, config) if checked else None
    return Plan(env, list(turns), list(decided), kb_check=check)


def guesser_plan(game: Game, turns: list[TurnData]) -> Plan:
    """Ask the model guesser's next question; questions the rules decide (invalid, repeated, naming
    a known word) are kept to store, the first one a person must judge becomes the pending one."""
    # one chat at a time: `auto` keeps a local model in float32 on a CPU (faster at batch 1)
    guesser = build_model(partial(builders.guesser_for, one_row=True), game.guesser)
    state = guesser.start(seed=game.seed)
    config = GameConfig.from_dict(game.config)
    state.data["win_rule"] = config.win_rule  # what naming a word does
    state.data["max_turns"] = config.max_turns  # when to stop asking and guess (natural)
    for turn in turns:
        guesser.observe(state, turn)
    env = engine_of(game, HumanVerdict(), turns)
    decided: list[TurnData] = []
    while not env.done:
        start = time.perf_counter()
        try:
            ask = guesser.ask(state)
        except Exception as err:  # the details go to the log, not to the visitor
            log.exception("guesser %s failed to ask in game %s", game.guesser.name, game.pk)
            raise ApplicationError(
                f"The guesser “{game.guesser.name}” failed to ask its question.", status=502
            ) from err
        pending = {
            "index": len(env.trajectory.turns),
            "question": ask.question,
            "candidates_left": ask.candidates_left,
            "top_candidates": [[w, float(p)] for w, p in ask.top_candidates]
            if ask.top_candidates
            else None,
            "extra": ask.extra,
            "guesser_ms": round((time.perf_counter() - start) * 1000, 2),
            "asked_at": time.time(),
        }
        request = env.prejudge(ask.question)
        if isinstance(request, JudgeRequest):
            return Plan(env, turns, decided, pending=pending)
        turn = env.finish_turn(ask.question, request, None, latency_ms=0.0).turn
        annotate(turn, pending, judge="rules")
        decided.append(turn)
        guesser.observe(state, turn)
    return ended_plan(game, env, turns, decided)


def apply_plan(game: Game, plan: Plan) -> None:
    """Store a plan in the (locked) game: its decided turns, then the pending question or the
    end."""
    for turn in plan.decided:
        store_turn(game, plan.env, turn)
    if plan.pending is not None:
        game.state["pending"] = plan.pending
        return
    game.state.pop("pending", None)
    if plan.kb_check is not None:
        game.state["kb_check"] = plan.kb_check


def annotate(turn: TurnData, pending: dict, judge: str) -> None:
    turn.candidates_left = pending.get("candidates_left")
    turn.top_candidates = (
        [(w, p) for w, p in pending["top_candidates"]] if pending.get("top_candidates") else None
    )
    turn.extra.update(pending.get("extra") or {})
    turn.extra.update(judge=judge, guesser_ms=pending.get("guesser_ms"))


def ms_since(timestamp: float | None) -> float | None:
    return round((time.time() - timestamp) * 1000, 1) if timestamp else None
