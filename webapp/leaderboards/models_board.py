"""The models boards (board ``models``, one per key: word list | judge | max turns, and the win
rule when it is not the default): model-vs-model games by guesser.

Each row: success as mean@k over words with a 95% interval under the rule the games were played
under, and beside it success under each win rule (``strict_success``, ``reference_success``, with
intervals; ``games.metrics.won_under`` re-judges each winning question), pass@k (k = samples per
word, the smallest count over the words, as ``games.metrics.summarise`` does), mean turns (all /
solved), games, words. Rows with fewer than ``PRELIMINARY_GAMES`` games are marked preliminary.
An index (board ``models_index``) lists the keys.

Model-vs-model games count only when the evaluation job that played them finished: a cancelled,
stopped, failed or still running job's games (a partial sample) never reach a board or the
ability scale (its run page shows them as partial results). Won and lost games count; abandoned
ones do not. Games without ``max_turns`` in their config count as 20-turn games, without
``win_rule`` as reference-rule games (the defaults).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Max, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from games import rules
from games.metrics import mean_at_k_interval, pass_at_k, won_under
from games.types import WIN_RULES, GameConfig
from webapp.catalog.models import ModelSpec, WordList
from webapp.jobs.models import JobStatus
from webapp.play.models import Game, GameMode, GameOutcome, Turn

PRELIMINARY_GAMES = 200  # a models-board row with fewer games is marked preliminary
DEFAULT_MAX_TURNS = GameConfig().max_turns
DEFAULT_WIN_RULE = GameConfig().win_rule
FINISHED = (GameOutcome.WON, GameOutcome.LOST)
_WON = Q(outcome=GameOutcome.WON)
DIGITS = 6


# --- helpers ---------------------------------------------------------------------------------


def rounded(x: float | None) -> float | None:
    """A number as the boards store it: DIGITS decimals (None stays None)."""
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


def not_won_under(games, rule: str) -> set[int]:
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
                f"{rule}_success": rounded(math.fsum(by_rule[rule]) / len(counts)),
                f"{rule}_success_lo": rounded(lo),
                f"{rule}_success_hi": rounded(hi),
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
        "pass_at_k": rounded(
            math.fsum(pass_at_k(n, c, min(k, n)) for n, c, *_ in counts) / len(counts)
        ),
        "mean_turns": rounded(turns / games),
        "mean_turns_solved": rounded(won_turns / wins) if wins else None,
        "games": games,
        "wins": wins,
        "words": len(counts),
        "last_game_at": _iso(last),
        "preliminary": games < PRELIMINARY_GAMES,
    }
