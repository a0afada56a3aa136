"""Reads for the arena pages: a battle as its person sees it (no guesser names before the end),
the battles that count for the ratings, and the people a researcher may exclude."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Q, QuerySet

from games import rules
from webapp.arena.models import ArenaExclusion, Battle, person_name
from webapp.arena.services import SIDES, games_over
from webapp.play.models import Game, GameOutcome, GameStatus
from webapp.play.question_checks import ANSWER_LABELS

TOP_CANDIDATES = 3  # candidates shown per turn at the end


def people_battles() -> QuerySet[Battle]:
    """Finished battles of people not excluded (the words people chose: "arena words")."""
    excluded = ArenaExclusion.objects.filter(lifted_at__isnull=True)
    users = excluded.filter(player__isnull=False).values("player_id")
    guests = excluded.filter(player__isnull=True).exclude(guest_key="").values("guest_key")
    return (
        Battle.objects.exclude(outcome="")
        .filter(abandoned=False)
        .exclude(player_id__in=users)
        .exclude(Q(player__isnull=True) & Q(guest_key__in=guests))
    )


def counted_battles() -> QuerySet[Battle]:
    """The battles the ratings and exports count: people_battles but for ties on a word neither
    side could name (certain ties)."""
    return people_battles().exclude(word_nameable=False)


def _side(battle: Battle, side: str, game: Game, reveal: bool) -> dict:
    turns = list(game.turns.order_by("index"))
    over = game.status != GameStatus.PLAYING
    pending = None if over else (game.state or {}).get("pending")
    row = {
        "side": side,
        "label": side.upper(),
        "over": over,
        "won": game.outcome == GameOutcome.WON,
        "abandoned": game.status == GameStatus.ABANDONED,
        "n_turns": game.n_turns,
        # the questions the person answered: not those the rules decided (repeats, invalid ones,
        # a guess of a drawn word), which the guesser's next question follows at once
        "person_answers": sum(1 for t in turns if (t.extra or {}).get("judge") != "rules"),
        "max_turns": int((game.config or {}).get("max_turns", 20)),
        "next_index": game.n_turns,
        "pending": pending["question"] if pending else None,
        "pending_guess": bool(
            pending and not game.secret and rules.guessed_word(pending["question"])
        ),
        "turns": [
            {
                "number": t.index + 1,
                "question": t.question,
                "answer": ANSWER_LABELS.get(t.verdict, t.verdict),
                "top": [w for w, _ in (t.top_candidates or [])[:TOP_CANDIDATES]] if reveal else [],
            }
            for t in turns
        ],
    }
    if reveal:
        row["name"] = (battle.guesser_a if side == "a" else battle.guesser_b).name
    return row


def active_side(sides: list[dict]) -> str | None:
    """The side the keys answer: of those with a question waiting, the one the person answered
    fewer times (A on a tie), so the turn alternates A, B, A, ... whatever the rules answered on
    either side; once one game is over the other keeps it."""
    waiting = [s for s in sides if s["pending"]]
    return min(waiting, key=lambda s: s["person_answers"])["side"] if waiting else None


def refresh_minutes() -> int:
    """How often the housekeeping refresh recomputes the boards, the Arena's too (minutes)."""
    task = settings.CELERY_BEAT_SCHEDULE.get("refresh-leaderboards", {})
    return max(1, round(float(task.get("schedule", 300)) / 60))


def _turn(sides: list[dict]) -> dict | None:
    """The line above the sides saying whose question the keys answer (None: nobody's)."""
    for s in sides:
        if s["active"]:
            alone = not any(o["pending"] for o in sides if o is not s)
            return {"label": s["label"], "number": s["next_index"] + 1, "alone": alone}
    return None


def battle_context(battle: Battle) -> dict:
    """What the battle page shows. Names and candidates only once the battle is over."""
    over = battle.finished or battle.abandoned
    sides = [_side(battle, s, battle.game_a if s == "a" else battle.game_b, over) for s in SIDES]
    active = active_side(sides) if not over else None
    for s in sides:
        s["active"] = s["side"] == active
    return {
        "turn": _turn(sides),
        "battle": battle,
        "sides": sides,
        "over": over,
        "active": active,
        "answered": sum(s["n_turns"] for s in sides),
        "needs_word": not over and games_over(battle) and not battle.word,
        "shown_word": battle.word if battle.word_source == "word_list" or over else "",
        "winner": {"a": "A", "b": "B"}.get(battle.outcome, ""),
        "refresh_minutes": refresh_minutes(),
    }


def battle_api_data(battle: Battle) -> dict:
    context = battle_context(battle)
    return {
        "id": str(battle.public_id),
        "state": "finished"
        if battle.finished
        else ("abandoned" if battle.abandoned else "playing"),
        "outcome": battle.outcome or None,
        "word": context["shown_word"] or None,
        "word_in_kb": battle.word_in_kb,
        "word_nameable": battle.word_nameable,
        "needs_word": context["needs_word"],
        "active_side": context["active"],
        "sides": [
            {k: v for k, v in s.items() if k not in ("active", "label")} for s in context["sides"]
        ],
    }


def people_rows() -> list[dict]:
    """Everyone who started a battle, most battles first, with counts and any active exclusion."""
    rows = (
        Battle.objects.values("player_id", "player__username", "guest_key")
        .annotate(
            battles=Count("id"),
            finished=Count("id", filter=~Q(outcome="")),
        )
        .order_by("-battles")
    )
    active = ArenaExclusion.objects.filter(lifted_at__isnull=True).select_related("excluded_by")
    by_user = {e.player_id: e for e in active if e.player_id}
    by_guest = {e.guest_key: e for e in active if not e.player_id}
    out = []
    for r in rows:
        guest = r["player_id"] is None
        exclusion = by_guest.get(r["guest_key"]) if guest else by_user.get(r["player_id"])
        out.append(
            {
                "user_id": r["player_id"],
                "name": person_name(r["guest_key"]) if guest else r["player__username"],
                "guest_key": r["guest_key"] if guest else "",
                "battles": r["battles"],
                "finished": r["finished"],
                "exclusion": exclusion,
            }
        )
    return out
