"""Leaderboards: compute the boards from finished games and store them as snapshots.

Like FastChat's monitor: games are the append-only record, ``games.metrics`` / ``games.rating``
do the arithmetic, ``leaderboards_refresh`` (run by the beat task ``leaderboards.refresh``) writes
one ``LeaderboardSnapshot`` per board and key, and views only read the newest snapshot.

Boards
- ``models`` (key: word list | judge | max turns, and the win rule when it is not the default):
  model-vs-model games by guesser: success as mean@k over words with a 95% interval under the
  rule the games were played under, and beside it success under each win rule
  (``strict_success``, ``reference_success``, with intervals; ``games.metrics.won_under`` re-judges
  each winning question), pass@k (k = samples per word, the smallest count over the words, as
  ``games.metrics.summarise`` does), mean turns (all / solved), games, words. Rows with fewer than
  ``PRELIMINARY_GAMES`` games are marked preliminary. An index snapshot (board ``models_index``)
  lists the keys.
- ``humans``: people's win rates, one ranking per word list (``webapp.leaderboards.people``).
- ``arena``: Bradley–Terry ratings of guessers from people's Arena battles (webapp.arena.board).
- ``ability``: one Rasch fit over people (their strict-rule games) and guesser models
  (model-vs-model games) with words as items, so people and models are ranked on one scale; a
  model's win counts only if its winning question also wins under the strict rule, so everyone is
  on one rule.

Model-vs-model games count only when the evaluation job that played them finished: a cancelled,
stopped, failed or still running job's games (a partial sample) never reach a board or the
ability scale (its run page shows them as partial results). Won and lost games count; abandoned
ones do not (the humans board shows how many a player abandoned). Games without ``max_turns`` in
their config count as 20-turn games, without ``win_rule`` as reference-rule games (the defaults).

History: a refresh whose numbers equal the newest snapshot's only stamps ``meta.checked_at`` on
it instead of adding a row, so the table grows when results change, not every five minutes.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Max, Q, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from games import rules
from games.metrics import mean_at_k_interval, pass_at_k, won_under
from games.rating import rasch_fit, theta_interval
from games.types import WIN_RULES, GameConfig
from webapp.arena.board import ARENA, arena_board, arena_words_refresh
from webapp.catalog.models import ModelSpec, WordList
from webapp.core import sending
from webapp.jobs.models import JobStatus
from webapp.leaderboards.models import LeaderboardSnapshot, RefreshPending
from webapp.leaderboards.people import PEOPLE_RULE, humans_board, people_games
from webapp.play.models import Game, GameMode, GameOutcome, Turn

MODELS, MODELS_INDEX, HUMANS, ABILITY = "models", "models_index", "humans", "ability"
BOARDS = (MODELS, HUMANS, ABILITY)
PRELIMINARY_GAMES = 200  # a models-board row with fewer games is marked preliminary
ABILITY_PRELIMINARY_GAMES = 20  # the same mark on the ability board
ABILITY_MAX_TURNS = GameConfig().max_turns  # the ability fit uses standard 20-question games only
DEFAULT_MAX_TURNS = GameConfig().max_turns
DEFAULT_WIN_RULE = GameConfig().win_rule
FINISHED = (GameOutcome.WON, GameOutcome.LOST)
_WON = Q(outcome=GameOutcome.WON)
ABILITY_RULE = PEOPLE_RULE  # everyone on the rule people play under
DIGITS = 6


# --- helpers ---------------------------------------------------------------------------------


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), DIGITS)


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt else None


def _max_turns(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return DEFAULT_MAX_TURNS


def _win_rule(value: Any) -> str:
    return value if value in WIN_RULES else DEFAULT_WIN_RULE


def _word(secret: str) -> str:
    return rules.clean_word(secret)


def models_key(
    word_list_id: int | None, judge_id: int | None, max_turns: int, win_rule: str = DEFAULT_WIN_RULE
) -> str:
    """The snapshot key of one models board: ids, so renaming a model does not split history (the
    win rule only when it is not the default, so reference-rule boards keep their keys)."""
    rule = "" if win_rule == DEFAULT_WIN_RULE else f"|rule:{win_rule}"
    return f"wl:{word_list_id or '-'}|judge:{judge_id or '-'}|turns:{max_turns}{rule}"


def _ability_turns_q() -> Q:
    # ABILITY_MAX_TURNS is the default, so games whose config omits max_turns belong too
    return Q(config__max_turns=ABILITY_MAX_TURNS) | Q(config__max_turns__isnull=True)


# --- the boards --------------------------------------------------------------------------------


def model_games(finishing_jobs: Iterable[int] = ()) -> QuerySet[Game]:
    """Model-vs-model games that count: won or lost, of evaluation jobs that finished (and of
    `finishing_jobs`, whose runner is storing its result right now)."""
    done = Q(job__status=JobStatus.FINISHED) | Q(job_id__in=list(finishing_jobs))
    return Game.objects.filter(
        done,
        mode=GameMode.MODEL_VS_MODEL,
        outcome__in=FINISHED,
        guesser__isnull=False,
        job__isnull=False,
    )


# (word list, judge, max turns, win rule) -> guesser -> word -> [games, wins, turns, won turns,
#  last, wins under the other rule]
Cells = dict[tuple, dict[int, dict[str, list]]]


def models_boards(
    finishing_jobs: Iterable[int] = (),
) -> tuple[list[dict], dict[str, tuple[list[dict], dict]]]:
    """(index rows, {key: (rows, meta)}) for every word list / judge / max turns / win rule with
    model games (see model_games)."""
    cells = _model_cells(model_games(finishing_jobs))
    names, lists = _names_of(cells)
    index, boards = [], {}
    for group, by_guesser in cells.items():
        key, rows, meta = _models_board(group, by_guesser, names, lists)
        boards[key] = (rows, meta)
        index.append(
            {
                "key": key,
                "label": meta["label"],
                "word_list": meta["word_list"],
                "judge": meta["judge"],
                "max_turns": meta["max_turns"],
                "win_rule": meta["win_rule"],
                "games": meta["games"],
                "guessers": meta["guessers"],
                "last_game_at": meta["last_game_at"],
            }
        )
    # the most played standard setting first: that is the page's default
    index.sort(
        key=lambda r: (
            r["max_turns"] != DEFAULT_MAX_TURNS,
            r["win_rule"] != DEFAULT_WIN_RULE,
            -r["games"],
            r["label"],
        )
    )
    return index, boards


def _model_cells(games: QuerySet[Game]) -> Cells:
    """The games' counts per board, guesser and word (see Cells)."""
    per_word = (
        games.values(
            "guesser_id",
            "word_list_id",
            "judge_id",
            "config__max_turns",
            "config__win_rule",
            "secret",
        )
        .annotate(
            n=Count("id"),
            wins=Count("id", filter=_WON),
            turns=Sum("n_turns"),
            won_turns=Sum("n_turns", filter=_WON),
            last=Max(Coalesce("finished_at", "created_at")),
        )
        .order_by()
    )
    cells: Cells = defaultdict(lambda: defaultdict(dict))
    for row in per_word:
        cell = _cell_of(
            cells,
            row["guesser_id"],
            row["word_list_id"],
            row["judge_id"],
            row["config__max_turns"],
            row["config__win_rule"],
            row["secret"],
        )
        cell[0] += row["n"]
        cell[1] += row["wins"]
        cell[2] += row["turns"] or 0
        cell[3] += row["won_turns"] or 0
        cell[4] = max(filter(None, (cell[4], row["last"])), default=None)
        cell[5] += row["wins"]  # until a stored winning question says otherwise (below)
    for won in _winning_questions(games):
        stored = won["game__config"] if isinstance(won["game__config"], dict) else {}
        rule = _win_rule(stored.get("win_rule"))
        if not won_under(
            _other_rule(rule),
            won=True,
            played_rule=rule,
            question=won["question"],
            secret=won["game__secret"],
            config=_game_config(stored),
        ):
            _cell_of(
                cells,
                won["game__guesser_id"],
                won["game__word_list_id"],
                won["game__judge_id"],
                stored.get("max_turns"),
                rule,
                won["game__secret"],
            )[5] -= 1
    return cells


def _cell_of(cells: Cells, guesser_id, word_list_id, judge_id, max_turns, win_rule, secret) -> list:
    group = (word_list_id, judge_id, _max_turns(max_turns), _win_rule(win_rule))
    return cells[group][guesser_id].setdefault(_word(secret), [0, 0, 0, 0, None, 0])


def _names_of(cells: Cells) -> tuple[dict[int, str], dict[int, dict]]:
    """(model spec names of the guessers and judges, word lists) of the boards, by id."""
    spec_ids = {g for by_guesser in cells.values() for g in by_guesser} | {
        j for (_, j, _, _) in cells if j
    }
    names = dict(ModelSpec.objects.filter(pk__in=spec_ids).values_list("pk", "name"))
    lists = {
        wl["pk"]: wl
        for wl in WordList.objects.filter(pk__in={w for (w, _, _, _) in cells if w}).values(
            "pk", "name", "version"
        )
    }
    return names, lists


def _models_board(
    group: tuple, by_guesser: dict[int, dict[str, list]], names: dict, lists: dict
) -> tuple[str, list[dict], dict]:
    """(key, ranked rows, meta) of the models board of one (word list, judge, max turns, rule)."""
    wl_id, judge_id, max_turns, win_rule = group
    rows = [
        _model_row(guesser_id, names.get(guesser_id, f"model {guesser_id}"), words, win_rule)
        for guesser_id, words in by_guesser.items()
    ]
    rows.sort(key=lambda r: (-r["success"], -r["games"], r["name"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    wl = lists.get(wl_id)
    word_list = {"id": wl_id, "name": wl["name"], "version": wl["version"]} if wl else None
    judge = {"id": judge_id, "name": names.get(judge_id, f"model {judge_id}")} if judge_id else None
    label = " · ".join(
        [
            f"{wl['name']} v{wl['version']}" if wl else "no word list",
            f"judge {judge['name']}" if judge else "no judge",
            f"{max_turns} turns",
            f"{win_rule} rule",
        ]
    )
    ks = sorted({r["k"] for r in rows})
    meta = {
        "label": label,
        "word_list": word_list,
        "judge": judge,
        "max_turns": max_turns,
        "win_rule": win_rule,
        "games": sum(r["games"] for r in rows),
        "guessers": len(rows),
        "last_game_at": max((r["last_game_at"] for r in rows if r["last_game_at"]), default=None),
        "preliminary_games": PRELIMINARY_GAMES,
        "k_min": ks[0],
        "k_max": ks[-1],
    }
    return models_key(wl_id, judge_id, max_turns, win_rule), rows, meta


def _game_config(stored: dict) -> GameConfig:
    """A stored game's config (its question length bounds matter when re-judging its question)."""
    try:
        return GameConfig.from_dict(stored)
    except (TypeError, ValueError):
        return GameConfig(win_rule=_win_rule(stored.get("win_rule")))


def _other_rule(rule: str) -> str:
    """The rule a board reports beside its own: strict beside reference, reference beside the
    others (strict, and lemma: the rule games stored before issue 32 were played under)."""
    return "strict" if rule == "reference" else "reference"


def _not_won_under(games, rule: str) -> set[int]:
    """Ids of won games whose winning question does not win under `rule`."""
    out = set()
    for won in _winning_questions(games, with_pk=True):
        stored = won["game__config"] if isinstance(won["game__config"], dict) else {}
        played = _win_rule(stored.get("win_rule"))
        if not won_under(
            rule,
            won=True,
            played_rule=played,
            question=won["question"],
            secret=won["game__secret"],
            config=_game_config(stored),
        ):
            out.add(won["game_id"])
    return out


def _winning_questions(games, with_pk: bool = False):
    """The last question of every won game (the one that won), with what re-judging it needs."""
    return (
        Turn.objects.filter(game__in=games.filter(_WON), index=F("game__n_turns") - 1)
        .values(
            "question",
            "game__secret",
            "game__config",
            "game__guesser_id",
            "game__word_list_id",
            "game__judge_id",
            *(["game_id"] if with_pk else []),
        )
        .order_by()
        .iterator()
    )


def _model_row(guesser_id: int, name: str, words: dict[str, list], win_rule: str) -> dict:
    counts = list(words.values())
    rates = [wins / n for n, wins, *_ in counts]
    other_rates = [c[5] / c[0] for c in counts]
    k = min(n for n, *_ in counts)
    games, wins = sum(c[0] for c in counts), sum(c[1] for c in counts)
    turns, won_turns = sum(c[2] for c in counts), sum(c[3] for c in counts)
    last = max((c[4] for c in counts if c[4]), default=None)
    by_rule = {win_rule: rates, _other_rule(win_rule): other_rates}
    success = {}
    for rule in by_rule:
        lo, hi = mean_at_k_interval(by_rule[rule])
        success.update(
            {
                f"{rule}_success": _r(math.fsum(by_rule[rule]) / len(counts)),
                f"{rule}_success_lo": _r(lo),
                f"{rule}_success_hi": _r(hi),
            }
        )
    return {
        "guesser_id": guesser_id,
        "name": name,
        "success": success[f"{win_rule}_success"],
        "success_lo": success[f"{win_rule}_success_lo"],
        "success_hi": success[f"{win_rule}_success_hi"],
        **success,
        "k": k,
        "pass_at_k": _r(math.fsum(pass_at_k(n, c, min(k, n)) for n, c, *_ in counts) / len(counts)),
        "mean_turns": _r(turns / games),
        "mean_turns_solved": _r(won_turns / wins) if wins else None,
        "games": games,
        "wins": wins,
        "words": len(counts),
        "last_game_at": _iso(last),
        "preliminary": games < PRELIMINARY_GAMES,
    }


def ability_board(finishing_jobs: Iterable[int] = ()) -> tuple[list[dict], dict]:
    turns = _ability_turns_q()
    humans = (
        people_games()
        .filter(turns, outcome__in=FINISHED, player__isnull=False)
        .order_by("pk")
        .values_list("player_id", "secret", "outcome")
    )
    models = model_games(finishing_jobs).filter(turns)
    lost_under_rule = _not_won_under(models, ABILITY_RULE)
    responses = [
        (("human", pid), _word(secret), outcome == GameOutcome.WON)
        for pid, secret, outcome in humans.iterator()
    ]
    responses += [
        (("model", gid), _word(secret), outcome == GameOutcome.WON and pk not in lost_under_rule)
        for pk, gid, secret, outcome in models.order_by("pk")
        .values_list("pk", "guesser_id", "secret", "outcome")
        .iterator()
    ]
    meta: dict[str, Any] = {
        "max_turns": ABILITY_MAX_TURNS,
        "responses": len(responses),
        "preliminary_games": ABILITY_PRELIMINARY_GAMES,
        "win_rule": ABILITY_RULE,
    }
    if not responses:
        return [], {**meta, "players": 0, "words": 0}
    fit = rasch_fit(responses)
    from django.contrib.auth import get_user_model

    user_ids = [pid for kind, pid in fit.players if kind == "human"]
    model_ids = [pid for kind, pid in fit.players if kind == "model"]
    usernames = dict(get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "username"))
    model_names = dict(ModelSpec.objects.filter(pk__in=model_ids).values_list("pk", "name"))
    rows = []
    for i, (kind, pid) in enumerate(fit.players):
        theta, se = float(fit.theta[i]), float(fit.theta_se[i])
        lo, hi = theta_interval(theta, se)
        name = (
            usernames.get(pid, f"user {pid}")
            if kind == "human"
            else model_names.get(pid, f"model {pid}")
        )
        games = int(fit.player_n[i])
        rows.append(
            {
                "kind": kind,
                "id": pid,
                "name": name,
                "theta": _r(theta),
                "theta_lo": _r(lo),
                "theta_hi": _r(hi),
                "theta_se": _r(se),
                "p_average_word": _r(1 / (1 + math.exp(-theta))),
                "games": games,
                "wins": int(fit.player_wins[i]),
                "preliminary": games < ABILITY_PRELIMINARY_GAMES,
            }
        )
    rows.sort(key=lambda r: (-r["theta"], r["name"], r["kind"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    meta.update(
        players=len(rows),
        humans=len(user_ids),
        models=len(model_ids),
        words=len(fit.items),
        ridge=fit.ridge,
        converged=fit.converged,
        iterations=fit.iterations,
    )
    return rows, meta


# --- storing -----------------------------------------------------------------------------------


def _json(value: Any) -> Any:
    return json.loads(
        json.dumps(value)
    )  # what a JSONField gives back, for comparing with the stored snapshot


def _snapshot_store(*, board: str, key: str, rows: list, meta: dict, now: datetime) -> bool:
    """Store a snapshot unless the newest one has the same numbers; true if a row was added."""
    rows, meta = _json(rows), _json(meta)
    checked = {"checked_at": now.isoformat()}
    latest = (
        LeaderboardSnapshot.objects.filter(board=board, key=key)
        .order_by("-computed_at", "-pk")
        .first()
    )
    if (
        latest is not None
        and latest.rows == rows
        and {k: v for k, v in latest.meta.items() if k != "checked_at"} == meta
    ):
        latest.meta = {**latest.meta, **checked}
        latest.save(update_fields=["meta"])
        return False
    snapshot = LeaderboardSnapshot(board=board, key=key, rows=rows, meta={**meta, **checked})
    snapshot.full_clean(exclude=["rows"])  # an empty board is a valid snapshot
    snapshot.save()
    return True


def leaderboards_refresh(
    *, now: datetime | None = None, finishing_jobs: Iterable[int] = ()
) -> dict:
    """Compute every board from the games and store the snapshots (the beat task calls this).
    `finishing_jobs`: evaluation jobs whose runner calls this just before the job is marked
    finished, so their games count already."""
    now = now or timezone.now()
    index, boards = models_boards(finishing_jobs)
    humans = humans_board()
    ability = ability_board(finishing_jobs)
    arena = arena_board()
    written = 0
    with transaction.atomic():
        for key, (rows, meta) in boards.items():
            written += _snapshot_store(board=MODELS, key=key, rows=rows, meta=meta, now=now)
        written += _snapshot_store(
            board=MODELS_INDEX, key="", rows=index, meta={"keys": len(index)}, now=now
        )
        written += _snapshot_store(board=HUMANS, key="", rows=humans[0], meta=humans[1], now=now)
        written += _snapshot_store(board=ABILITY, key="", rows=ability[0], meta=ability[1], now=now)
        written += _snapshot_store(board=ARENA, key="", rows=arena[0], meta=arena[1], now=now)
    arena_words_refresh()  # a new "arena words" version when people chose new words
    return {
        "models_keys": len(boards),
        "humans_rows": len(humans[0]),
        "ability_rows": len(ability[0]),
        "arena_rows": len(arena[0]),
        "snapshots_written": written,
        "computed_at": now.isoformat(),
    }


# One pending refresh at a time: "Recompute now" marks it; the worker clears the mark as it starts,
# so a click while one runs queues one more, a click while one waits queues nothing. A mark this old
# is taken to be a lost message and queued again.
REFRESH_KEY = "all-boards"
REFRESH_PENDING_SECONDS = 600


def leaderboards_refresh_queue(*, now: datetime | None = None) -> bool:
    """Queue a refresh once the current transaction commits ("Recompute now"), unless one is
    already waiting. Returns whether this call queued one."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=REFRESH_PENDING_SECONDS)
    taken_over = RefreshPending.objects.filter(key=REFRESH_KEY, queued_at__lt=stale).update(
        queued_at=now
    )
    if not taken_over:
        try:
            with transaction.atomic():
                RefreshPending.objects.create(key=REFRESH_KEY, queued_at=now)
        except IntegrityError:
            return False  # one is waiting already
    transaction.on_commit(lambda: sending.send_task(sending.LEADERBOARDS_REFRESH))
    return True


def leaderboards_refresh_pending() -> dict:
    """The queued task: clear the pending mark first (later clicks queue again), then refresh."""
    RefreshPending.objects.filter(key=REFRESH_KEY).delete()
    return leaderboards_refresh()
