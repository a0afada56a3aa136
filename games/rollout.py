"""Many games in lock-step: per turn one `ask_batch` for all live games, one judge batch for the
questions the rules leave open, and (optionally) one batched ΔBelief call.

Each turn records what training consumes directly, JSON-serialisable in `turn.extra`: the
guesser's `Ask.extra` (for LLM guessers: the prompt `messages`, `prompt_token_ids`, generated
`token_ids`, their `logprobs`, the raw `completion`). The prompt tokens are the context (masked
in training) and `token_ids` the action of that turn, so no flat sequence or mask is needed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from games.belief import log_beliefs
from games.engine import TwentyQuestions
from games.guessers.base import Guesser
from games.judges.base import Judge, JudgeRequest
from games.llm.base import LLMBackend
from games.llm.chat import GuesserFormat
from games.types import GameConfig, Trajectory, Turn

TurnHook = Callable[[int, Trajectory, Turn], None]


def rollout(
    guesser: Guesser,
    judge: Judge,
    secrets: Sequence[str],
    *,
    seeds: Sequence[int] | None = None,
    config: GameConfig = GameConfig(),
    belief_backend: LLMBackend | None = None,
    belief_format: GuesserFormat | None = None,
    on_turn: TurnHook | None = None,
) -> list[Trajectory]:
    """Play one game per secret (game i uses `seeds[i]`, default i) and return the trajectories.

    With `belief_backend` (normally the guesser's own backend: ΔBelief is the policy's belief),
    fills `initial_belief`, `turn.belief` and `turn.delta_belief`; the chat layout is
    `belief_format`, else the guesser's `chat_format`, else the default one. `latency_ms` of a
    turn is the wall time of the whole batched turn. `on_turn(game_index, trajectory, turn)` is
    called after every turn (progress reporting).
    """
    seeds = list(range(len(secrets))) if seeds is None else [int(s) for s in seeds]
    if len(seeds) != len(secrets):
        raise ValueError(f"got {len(seeds)} seeds for {len(secrets)} secrets")
    envs = [TwentyQuestions(judge, config) for _ in secrets]
    trajectories = [env.reset(secret, seed) for env, secret, seed in zip(envs, secrets, seeds)]
    states = [guesser.start(seed=seed) for seed in seeds]
    for state in states:
        state.data["win_rule"] = config.win_rule  # what naming a word does (infogain reads it)
        state.data["max_turns"] = config.max_turns  # when to stop asking and guess (natural)
    for traj in trajectories:
        traj.guesser = guesser.name
    fmt = belief_format or getattr(guesser, "chat_format", None) or GuesserFormat()
    beliefs: list[float] = []
    if belief_backend is not None:
        beliefs = log_beliefs(
            belief_backend, [([], t.secret) for t in trajectories], chat_format=fmt
        )
        for traj, belief in zip(trajectories, beliefs):
            traj.initial_belief = belief

    live = list(range(len(envs)))
    while live:
        start = time.perf_counter()
        asks = guesser.ask_batch([states[i] for i in live])
        if len(asks) != len(live):
            raise RuntimeError(
                f"{guesser.name} returned {len(asks)} questions for {len(live)} games"
            )
        pre = [envs[i].prejudge(ask.question) for i, ask in zip(live, asks)]
        open_ = [k for k, p in enumerate(pre) if isinstance(p, JudgeRequest)]
        answers = judge.judge_batch([pre[k] for k in open_]) if open_ else []
        if len(answers) != len(open_):
            raise RuntimeError(
                f"{judge.name} returned {len(answers)} answers for {len(open_)} questions"
            )
        answer_of = dict(zip(open_, answers))
        latency = (time.perf_counter() - start) * 1000
        played = []
        for k, (i, ask) in enumerate(zip(live, asks)):
            turn = (
                envs[i].finish_turn(ask.question, pre[k], answer_of.get(k), latency_ms=latency).turn
            )
            turn.candidates_left = ask.candidates_left
            turn.top_candidates = ask.top_candidates
            turn.extra.update(ask.extra)
            guesser.observe(states[i], turn)
            played.append(turn)
        if belief_backend is not None:
            items = [(trajectories[i].turns, trajectories[i].secret) for i in live]
            for i, turn, belief in zip(
                live, played, log_beliefs(belief_backend, items, chat_format=fmt)
            ):
                turn.belief, turn.delta_belief = belief, belief - beliefs[i]
                beliefs[i] = belief
        if on_turn is not None:
            for i, turn in zip(live, played):
                on_turn(i, trajectories[i], turn)
        live = [i for i in live if not envs[i].done]
    return trajectories
