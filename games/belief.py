"""ΔBelief (ΔBelief-RL): how much a turn raised the policy's belief in the secret.

log b_t is the sum of the policy's log-probs (temperature 1) of the secret's tokens in the
assistant turn `Is it '<secret>'?` appended to the guesser's chat after turn t (b_0: after the
initial prompt only); ΔBelief_t = log b_t − log b_{t−1}, for turns t = 1..T (stored on the
0-based `Turn` index t − 1). Every function makes one batched backend call.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.llm.base import LLMBackend
from games.llm.chat import GuesserFormat, belief_reply
from games.types import Trajectory, Turn


def log_beliefs(
    backend: LLMBackend,
    items: Sequence[tuple[Sequence[Turn], str]],
    *,
    chat_format: GuesserFormat = GuesserFormat(),
) -> list[float]:
    """log b for each (history, secret) pair, in order."""
    if not items:
        return []
    chats, replies, spans = [], [], []
    for history, secret in items:
        reply, span = belief_reply(secret)
        chats.append(chat_format.messages(history))
        replies.append(reply)
        spans.append(span)
    return backend.score_spans(chats, replies, spans)


def delta_beliefs(beliefs: Sequence[float]) -> list[float]:
    """ΔBelief_t for t = 1..T from [log b_0, ..., log b_T]."""
    return [b - a for a, b in zip(beliefs, beliefs[1:])]


def annotate_beliefs(
    backend: LLMBackend,
    trajectories: Sequence[Trajectory],
    *,
    chat_format: GuesserFormat = GuesserFormat(),
) -> None:
    """Fill `initial_belief`, `turn.belief` and `turn.delta_belief` of played trajectories."""
    items = [
        (traj.turns[:t], traj.secret) for traj in trajectories for t in range(len(traj.turns) + 1)
    ]
    beliefs = iter(log_beliefs(backend, items, chat_format=chat_format))
    for traj in trajectories:
        values = [next(beliefs) for _ in range(len(traj.turns) + 1)]
        traj.initial_belief = values[0]
        for turn, belief, delta in zip(traj.turns, values[1:], delta_beliefs(values)):
            turn.belief, turn.delta_belief = belief, delta
