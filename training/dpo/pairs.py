"""Multi-turn preference pairs (CollabLLM style) from proxy rewards.

For a history (a prefix of a teacher or stored game) the policy samples N candidate next
questions; each is judged as the next turn of that game (the engine's rules, then the judge) and
scored by a proxy reward:
- `infogain`: bits by which the knowledge base's consistent candidate set shrinks with the judge's
  answer for the secret (naming the secret: every remaining bit plus one); a turn the judge does
  not answer yes/no scores its engine reward (invalid −5.05, repeated −1.05, unknown −0.05);
- `belief`: ΔBelief of the turn under the policy (games.belief) plus the turn's engine reward;
- `success`: the mean return (engine rewards of this turn and the rest of the game) of
  `continuations` games the policy plays on from the candidate;
- `rating` (CollabLLM's judge rating): a judge model (`rating_model`) rates the candidate as the
  next question after the history ("Q: … A: Yes/No" lines) on a 1–5 scale; the rating is the
  expected digit under its probabilities of replying "1".."5" (the five replies scored as spans,
  softmax over their log-probs), or, for a backend that cannot score spans, the first standalone
  digit 1–5 of a greedy reply (none: a neutral 3, counted in `candidates/rating_unparsed_rate`); the
  reward is (rating − 3) / 2 plus the turn's engine reward.
chosen = the best candidate, rejected = the worst; pairs whose reward gap is under
`min_reward_gap` (or whose two texts are equal) are dropped.
"""

from __future__ import annotations

import math
import random
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from games.engine import TwentyQuestions
from games.guessers.base import Guesser, GuesserState
from games.judges.base import Judge, JudgeRequest
from games.kb.narrowing import consistent, turn_bits
from games.llm.base import Chat, SamplingParams
from games.llm.chat import GuesserFormat
from games.types import GameConfig, JudgeAnswer, Trajectory, Turn, Verdict

REWARDS = ("infogain", "belief", "success", "rating")


@dataclass
class Candidate:
    text: str  # what the pair trains: the extracted question, else the raw completion
    turn: Turn  # the turn it makes in the game (verdict, engine reward parts)
    reward: float = 0.0
    rating: float | None = None  # reward=rating: the judge model's 1–5 rating
    rating_parsed: bool = True  # False: the text fallback found no digit (rated a neutral 3)


@dataclass
class Branch:
    """One history and the policy's candidate next questions."""

    trajectory: Trajectory
    t: int  # history = trajectory.turns[:t]
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def history(self) -> list[Turn]:
        return self.trajectory.turns[: self.t]


def branch_seed(seed: int, traj: Trajectory, t: int, k: int) -> int:
    return zlib.crc32(f"dpo:{seed}:{traj.secret}:{traj.seed}:{t}:{k}".encode()) & 0x7FFFFFFF


def history_prefixes(
    trajectories: Sequence[Trajectory], per_game: int, seed: int
) -> list[tuple[Trajectory, int]]:
    """(game, t) pairs: `per_game` random turn indices of each game (0 = every turn)."""
    out = []
    for traj in trajectories:
        ts = list(range(len(traj.turns)))
        if per_game and len(ts) > per_game:
            ts = sorted(random.Random(f"{seed}:{traj.secret}:{traj.seed}").sample(ts, per_game))
        out += [(traj, t) for t in ts]
    return out


def env_at(judge: Judge, traj: Trajectory, t: int, max_turns: int) -> TwentyQuestions:
    """The game after its first `t` turns, with their stored verdicts (nothing is re-judged)."""
    env = TwentyQuestions(judge, GameConfig(max_turns=max_turns))
    env.reset(traj.secret, traj.seed)
    for turn in traj.turns[:t]:
        env.finish_turn(turn.question, JudgeAnswer(turn.verdict, raw=turn.judge_raw), None)
    return env


def play_turns(
    envs: Sequence[TwentyQuestions], questions: Sequence[str], judge: Judge
) -> list[Turn]:
    """One more turn in each game (rules first, then one batched judge call)."""
    pre = [env.prejudge(q) for env, q in zip(envs, questions)]
    open_ = [k for k, p in enumerate(pre) if isinstance(p, JudgeRequest)]
    answers = dict(zip(open_, judge.judge_batch([pre[k] for k in open_]))) if open_ else {}
    return [
        env.finish_turn(q, p, answers.get(k)).turn
        for k, (env, q, p) in enumerate(zip(envs, questions, pre))
    ]


def sample_candidates(
    policy: Guesser,
    judge: Judge,
    prefixes: Sequence[tuple[Trajectory, int]],
    *,
    n: int,
    max_turns: int,
    seed: int,
    batch_size: int = 64,
) -> list[Branch]:
    """N policy questions per history, each played as the game's next turn."""
    branches = [Branch(traj, t) for traj, t in prefixes]
    jobs = [(b, k) for b in branches for k in range(n)]
    for start in range(0, len(jobs), batch_size):
        chunk = jobs[start : start + batch_size]
        states = [
            GuesserState(seed=branch_seed(seed, b.trajectory, b.t, k), history=list(b.history))
            for b, k in chunk
        ]
        asks = policy.ask_batch(states)
        envs = [env_at(judge, b.trajectory, b.t, max_turns) for b, _ in chunk]
        turns = play_turns(envs, [a.question for a in asks], judge)
        for (branch, _), ask, turn in zip(chunk, asks, turns):
            text = ask.question.strip() or str(ask.extra.get("completion", "")).strip()
            branch.candidates.append(Candidate(text, turn))
    return branches


# -- rewards ---------------------------------------------------------------------------------
def info_gain(
    model: Any, history: Sequence[Turn], turn: Turn, before: np.ndarray | None = None
) -> float:
    """The `infogain` reward of one turn after `history` (see the module docstring)."""
    before = consistent(model, history) if before is None else before
    left = max(int(before.sum()), 1)
    if turn.verdict is Verdict.FINISHED:
        return math.log2(left) + 1.0
    if turn.verdict not in (Verdict.YES, Verdict.NO):
        return turn.total_reward
    return turn_bits(
        model, before, turn
    )  # 0 for a yes/no the KB cannot ground (another judge answered it)


def score_infogain(branches: Sequence[Branch], model: Any) -> None:
    for b in branches:
        before = consistent(model, b.history)
        for c in b.candidates:
            c.reward = info_gain(model, b.history, c.turn, before)


def score_belief(branches: Sequence[Branch], backend: Any, chat_format: GuesserFormat) -> None:
    from games.belief import log_beliefs

    items = []
    for b in branches:
        items.append((b.history, b.trajectory.secret))
        items += [([*b.history, c.turn], b.trajectory.secret) for c in b.candidates]
    beliefs = iter(log_beliefs(backend, items, chat_format=chat_format))
    for b in branches:
        base = next(beliefs)
        for c in b.candidates:
            c.turn.belief = next(beliefs)
            c.turn.delta_belief = c.turn.belief - base
            c.reward = c.turn.delta_belief + c.turn.total_reward


def score_success(
    branches: Sequence[Branch],
    policy: Guesser,
    judge: Judge,
    *,
    continuations: int,
    max_turns: int,
    seed: int,
) -> None:
    """Mean return of `continuations` games the policy plays on from each candidate."""
    games = []  # (candidate, turn index of the candidate, env, guesser state)
    for b in branches:
        for k, c in enumerate(b.candidates):
            for j in range(continuations):
                env = env_at(judge, b.trajectory, b.t, max_turns)
                env.finish_turn(
                    c.turn.question, JudgeAnswer(c.turn.verdict, raw=c.turn.judge_raw), None
                )
                state = GuesserState(
                    seed=branch_seed(seed + 1 + j, b.trajectory, b.t, k),
                    history=list(env.trajectory.turns),
                )
                games.append((c, b.t, env, state))
    live = [g for g in games if not g[2].done]
    while live:
        asks = policy.ask_batch([g[3] for g in live])
        turns = play_turns([g[2] for g in live], [a.question for a in asks], judge)
        for g, turn in zip(live, turns):
            policy.observe(g[3], turn)
        live = [g for g in live if not g[2].done]
    returns: dict[int, list[float]] = {}
    for c, t, env, _ in games:
        returns.setdefault(id(c), []).append(
            sum(turn.total_reward for turn in env.trajectory.turns[t:])
        )
    for b in branches:
        for c in b.candidates:
            c.reward = float(np.mean(returns[id(c)]))


RATING_SYSTEM_PROMPT = (
    "You rate moves in a game of 20 Questions. The guesser tries to find a secret word "
    "(a common English noun) by asking questions that the answerer answers with Yes or No.\n"
    "Rate the candidate next question of the guesser from 1 (useless) to 5 (excellent). "
    "A good question is a single, well-formed yes/no question that was not asked before and "
    "splits the possibilities that remain after the answers so far into two parts of similar size. "
    "A guess (naming one thing) is good only when the answers so far point to that one thing.\n"
    "Reply with a single digit from 1 to 5."
)
RATING_DIGITS = ("1", "2", "3", "4", "5")
RATING_SAMPLING = SamplingParams(max_new_tokens=16, temperature=0.0)  # the text fallback: greedy
_HISTORY_ANSWERS = {
    Verdict.YES: "Yes",
    Verdict.NO: "No",
    Verdict.UNKNOWN: "I don't know",
    Verdict.FINISHED: "Correct",
    Verdict.INVALID: "(invalid: not a yes/no question)",
    Verdict.REPEATED: "(repeated: asked before)",
}
_THINK_BLOCK = re.compile(r"<think>.*?(</think>|$)", re.IGNORECASE | re.DOTALL)
_RATING_DIGIT = re.compile(r"(?<!\d)[1-5](?!\d)")


def rating_messages(history: Sequence[Turn], candidate: str, *, max_turns: int = 20) -> Chat:
    """The rating judge's chat: the rubric, then the history as "Q: … A: …" lines and the
    candidate."""
    lines = [
        f"Q: {t.question}\nA: {_HISTORY_ANSWERS.get(t.verdict, t.verdict.value)}" for t in history
    ]
    asked = "\n".join(lines) if lines else "(none: this is the first question)"
    user = (
        f"Questions and answers so far:\n{asked}\n\n"
        f"Candidate next question ({len(history) + 1} of {max_turns}): {candidate}\n\n"
        "Rating (1-5):"
    )
    return [{"role": "system", "content": RATING_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def expected_rating(logprobs: Sequence[float]) -> float:
    """Σ p_k·k with p = softmax of the log-probs of replying "1".."5"."""
    z = np.asarray(logprobs, dtype=float)
    p = np.exp(z - z.max())
    return float((p / p.sum()) @ np.arange(1, len(z) + 1))


def parse_rating(text: str) -> int | None:
    """The first standalone digit 1–5 of a reply (outside <think> blocks), else None."""
    found = _RATING_DIGIT.search(_THINK_BLOCK.sub(" ", text or ""))
    return int(found.group()) if found else None


def rate(
    chats: Sequence[Chat],
    backend: Any,
    *,
    batch_size: int = 64,
    sampling: SamplingParams = RATING_SAMPLING,
) -> list[tuple[float, bool]]:
    """(rating, parsed) per rating chat: the expected digit from span scores, `batch_size` chats
    (× 5 replies) per backend call; a backend whose score_spans raises NotImplementedError (an
    OpenAI-compatible server) is asked for text instead and its first digit read (none: 3.0,
    False)."""
    out: list[tuple[float, bool]] = []
    spans = True
    for start in range(0, len(chats), batch_size):
        chunk = list(chats[start : start + batch_size])
        if spans:
            try:
                scores = backend.score_spans(
                    [c for c in chunk for _ in RATING_DIGITS],
                    RATING_DIGITS * len(chunk),
                    [(0, 1)] * (len(RATING_DIGITS) * len(chunk)),
                )
            except NotImplementedError:
                spans = False
            else:
                k = len(RATING_DIGITS)
                out += [
                    (expected_rating(scores[i * k : (i + 1) * k]), True) for i in range(len(chunk))
                ]
                continue
        for gen in backend.generate(chunk, sampling):
            digit = parse_rating(gen.text)
            out.append((3.0, False) if digit is None else (float(digit), True))
    return out


def score_rating(
    branches: Sequence[Branch], backend: Any, *, max_turns: int = 20, batch_size: int = 64
) -> None:
    """reward = (rating − 3) / 2 + the turn's engine reward (see the module docstring)."""
    cands = [(b, c) for b in branches for c in b.candidates]
    ratings = rate(
        [rating_messages(b.history, c.text, max_turns=max_turns) for b, c in cands],
        backend,
        batch_size=batch_size,
    )
    for (_, c), (rating, parsed) in zip(cands, ratings):
        c.rating, c.rating_parsed = rating, parsed
        c.reward = (rating - 3.0) / 2.0 + c.turn.total_reward


# -- pairs -------------------------------------------------------------------------------------
def make_pairs(
    branches: Sequence[Branch], chat_format: GuesserFormat, min_reward_gap: float
) -> list[dict]:
    """chosen = best, rejected = worst candidate of each branch (the first of equals); drops
    branches whose gap is under `min_reward_gap` or whose two texts are the same."""
    pairs = []
    for b in branches:
        if len(b.candidates) < 2:
            continue
        best = max(b.candidates, key=lambda c: c.reward)
        worst = min(b.candidates, key=lambda c: c.reward)
        gap = best.reward - worst.reward
        if gap < min_reward_gap or not best.text or best.text == worst.text:
            continue
        pairs.append(
            {
                "prompt": chat_format.messages(b.history),
                "chosen": [{"role": "assistant", "content": best.text}],
                "rejected": [{"role": "assistant", "content": worst.text}],
                "secret": b.trajectory.secret,
                "turn": b.t,
                "chosen_reward": best.reward,
                "rejected_reward": worst.reward,
                "chosen_verdict": best.turn.verdict.value,
                "rejected_verdict": worst.turn.verdict.value,
            }
        )
    return pairs


def candidate_stats(branches: Sequence[Branch]) -> dict[str, float]:
    """Diagnostics of the sampled candidates (logged before training)."""
    cands = [c for b in branches for c in b.candidates]
    if not cands:
        return {}
    rewards = np.array([c.reward for c in cands])
    verdicts = [c.turn.verdict for c in cands]
    spread = [
        max(c.reward for c in b.candidates) - min(c.reward for c in b.candidates)
        for b in branches
        if b.candidates
    ]
    rated = [c for c in cands if c.rating is not None]
    ratings = (
        {
            "candidates/rating_mean": float(np.mean([c.rating for c in rated])),
            "candidates/rating_unparsed_rate": float(np.mean([not c.rating_parsed for c in rated])),
        }
        if rated
        else {}
    )
    return {
        "candidates/reward_mean": float(rewards.mean()),
        "candidates/reward_std": float(rewards.std()),
        "candidates/answered_rate": float(
            np.mean([v in (Verdict.YES, Verdict.NO, Verdict.FINISHED) for v in verdicts])
        ),
        "candidates/invalid_rate": float(np.mean([v is Verdict.INVALID for v in verdicts])),
        "candidates/repeated_rate": float(np.mean([v is Verdict.REPEATED for v in verdicts])),
        "candidates/win_rate": float(np.mean([v is Verdict.FINISHED for v in verdicts])),
        "candidates/distinct_fraction": float(
            np.mean(
                [
                    len({c.text for c in b.candidates}) / len(b.candidates)
                    for b in branches
                    if b.candidates
                ]
            )
        ),
        "candidates/reward_gap_mean": float(np.mean(spread)) if spread else 0.0,
        **ratings,
    }
