"""What the play API returns for a game and a turn: where a game stands, its whole trajectory,
one stored turn (the judge's text hidden while the game runs)."""

from __future__ import annotations

from django.urls import reverse

from webapp.play.models import Game, GameMode, GameStatus, Turn
from webapp.play.selectors import game_export, secret_visible
from webapp.play.visitors import Visitor

ROLE_OF_MODE = {GameMode.HUMAN_GUESSER: "guesser", GameMode.HUMAN_JUDGE: "answerer"}


def game_state(game: Game, visitor: Visitor | None) -> dict:
    """Where a game stands, without its turns (no queries): what a client needs to play on."""
    playing = game.status == GameStatus.PLAYING
    pending = (game.state or {}).get("pending") if playing else None
    return {
        "id": game.pk,
        "url": reverse("play:game-detail", args=[game.pk]),
        "role": ROLE_OF_MODE.get(game.mode, "none"),
        "status": game.status,
        "outcome": game.outcome,
        "n_turns": game.n_turns,
        "max_turns": int((game.config or {}).get("max_turns", 20)),
        "next_index": game.n_turns if playing else None,
        "secret": game.secret if secret_visible(game, visitor) else None,
        "pending": {k: pending.get(k) for k in ("index", "question", "candidates_left")}
        if pending
        else None,
        "kb_check": (game.state or {}).get("kb_check"),
    }


def game_api_data(game: Game, visitor: Visitor | None) -> dict:
    """game_export plus the game's state: the whole trajectory and how to play on."""
    data = game_export(game, visitor)
    data.update(game_state(game, visitor))
    return data


def turn_data(turn: Turn, visitor: Visitor | None) -> dict:
    """One stored turn as the API shows it (the judge's text hidden while the game runs)."""
    visible = secret_visible(turn.game, visitor)
    return {
        "id": turn.pk,
        "index": turn.index,
        "question": turn.question,
        "verdict": turn.verdict,
        "feedback": turn.feedback,
        "judge_raw": turn.judge_raw if visible else "",
        "judged_by": turn.judged_by.get_username() if turn.judged_by else None,
        "reward": turn.reward,
        "belief": turn.belief,
        "delta_belief": turn.delta_belief,
        "advantage": turn.advantage,
        "candidates_left": turn.candidates_left,
        # the guesser's candidates point at the secret: shown once the game is over
        "top_candidates": turn.top_candidates if turn.game.status != GameStatus.PLAYING else None,
        "latency_ms": turn.latency_ms,
        "extra": turn.extra,
        "created_at": turn.created_at,
    }
