"""Storing games.Trajectory objects as Game and Turn rows (shared by play and jobs)."""

from __future__ import annotations

from django.utils import timezone

from games.types import Outcome, Trajectory
from games.types import Turn as TurnData
from webapp.play.models import Game, GameMode, GameStatus, Turn

_STATUS = {
    Outcome.PLAYING: GameStatus.PLAYING,
    Outcome.WON: GameStatus.FINISHED,
    Outcome.LOST: GameStatus.FINISHED,
    Outcome.ABANDONED: GameStatus.ABANDONED,
}


def turn_row(game: Game, turn: TurnData, **fields) -> Turn:
    return Turn(
        game=game,
        index=turn.index,
        question=turn.question,
        verdict=turn.verdict.value,
        feedback=turn.feedback[:300],
        judge_raw=turn.judge_raw,
        reward=turn.reward,
        total_reward=turn.total_reward,
        belief=turn.belief,
        delta_belief=turn.delta_belief,
        advantage=turn.advantage,
        candidates_left=turn.candidates_left,
        top_candidates=[[w, float(p)] for w, p in turn.top_candidates]
        if turn.top_candidates is not None
        else None,
        latency_ms=turn.latency_ms,
        extra=turn.extra,
        **fields,
    )


def trajectories_store(
    trajectories: list[Trajectory],
    *,
    guesser,
    judge,
    job=None,
    job_id=None,
    word_list=None,
    sample_indices: list[int] | None = None,
    mode: str = GameMode.MODEL_VS_MODEL,
    words: dict[str, int] | None = None,
) -> list[Game]:
    """Bulk-insert finished model-vs-model games with all their turns."""
    now = timezone.now()
    games = [
        Game(
            mode=mode,
            secret=t.secret,
            word_id=(words or {}).get(t.secret),
            word_list=word_list,
            guesser=guesser,
            judge=judge,
            config=t.config.to_dict(),
            seed=t.seed,
            status=_STATUS[t.outcome],
            outcome=t.outcome.value,
            n_turns=t.n_turns,
            initial_belief=t.initial_belief,
            job_id=job_id or (job.pk if job else None),
            sample_index=(sample_indices[i] if sample_indices else 0),
            finished_at=now,
        )
        for i, t in enumerate(trajectories)
    ]
    games = Game.objects.bulk_create(games, batch_size=500)
    Turn.objects.bulk_create(
        [turn_row(g, turn) for g, t in zip(games, trajectories) for turn in t.turns],
        batch_size=2000,
    )
    return games


def trajectory_of(game: Game) -> Trajectory:
    """A stored game as a games.Trajectory (e.g. to replay it or feed training)."""
    from games.types import GameConfig, Verdict

    turns = [
        TurnData(
            index=t.index,
            question=t.question,
            verdict=Verdict(t.verdict),
            feedback=t.feedback,
            judge_raw=t.judge_raw,
            reward=t.reward,
            belief=t.belief,
            delta_belief=t.delta_belief,
            advantage=t.advantage,
            candidates_left=t.candidates_left,
            top_candidates=[(w, p) for w, p in t.top_candidates] if t.top_candidates else None,
            latency_ms=t.latency_ms,
            extra=t.extra,
        )
        for t in game.turns.order_by("index")
    ]
    outcome = (
        Outcome(game.outcome) if game.outcome in Outcome._value2member_map_ else Outcome.PLAYING
    )
    return Trajectory(
        secret=game.secret,
        seed=game.seed,
        config=GameConfig.from_dict(game.config),
        turns=turns,
        outcome=outcome,
        guesser=game.guesser.name if game.guesser else "",
        judge=game.judge.name if game.judge else "",
        initial_belief=game.initial_belief,
    )
