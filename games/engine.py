"""The 20 Questions environment: reset(secret, seed) / step(question) -> StepResult."""

from __future__ import annotations

import time
import zlib
from collections.abc import Sequence

from games import rules
from games.judges.base import Judge, JudgeRequest
from games.types import GameConfig, JudgeAnswer, Outcome, StepResult, Trajectory, Turn, Verdict

MAX_STORED_QUESTION_CHARS = 2000  # longer questions are invalid anyway; keep storage bounded


class GameOverError(RuntimeError):
    """A question was submitted to a game that has ended."""


def judge_seed(game_seed: int, turn_index: int) -> int:
    return zlib.crc32(f"{game_seed}:{turn_index}".encode()) & 0x7FFFFFFF


def reward_parts(verdict: Verdict, config: GameConfig) -> dict[str, float]:
    parts = {"turn": config.turn_penalty}
    if verdict is Verdict.FINISHED:
        parts["win"] = config.win_reward
    elif verdict is Verdict.INVALID:
        parts["invalid"] = config.invalid_penalty
    elif verdict is Verdict.REPEATED:
        parts["repeated"] = config.repeated_penalty
    elif verdict is Verdict.UNKNOWN and config.unknown_penalty:
        parts["unknown"] = config.unknown_penalty
    return parts


class TwentyQuestions:
    """One game at a time against one judge; `prejudge`/`finish_turn` let rollouts batch the
    judge."""

    def __init__(self, judge: Judge, config: GameConfig | None = None):
        self.judge = judge
        self.config = config or GameConfig()
        self.trajectory: Trajectory | None = None
        self._asked: set[str] = set()

    # -- lifecycle -------------------------------------------------------
    def reset(self, secret: str, seed: int = 0) -> Trajectory:
        secret = rules.clean_word(secret)
        if not secret:
            raise ValueError("the secret word is empty")
        self.judge.check_secret(secret)
        self.trajectory = Trajectory(
            secret=secret, seed=seed, config=self.config, judge=self.judge.name
        )
        self._asked = set()
        return self.trajectory

    @property
    def done(self) -> bool:
        return self.trajectory is not None and self.trajectory.outcome is not Outcome.PLAYING

    def step(self, question: str) -> StepResult:
        start = time.perf_counter()
        request = self.prejudge(question)
        answer = None
        if isinstance(request, JudgeRequest):
            answer = self.judge.judge_batch([request])[0]
        return self.finish_turn(
            question, request, answer, latency_ms=(time.perf_counter() - start) * 1000
        )

    # -- the two halves of a step (rollouts call the judge in between, batched) --
    def prejudge(self, question: str) -> JudgeRequest | JudgeAnswer:
        """Rule checks before the judge (games.rules.rule_verdict under the config's win rule, then
        repeats): a final answer, or the request to send to the judge. A repeat is `repeated` unless
        the rules call it invalid; a strict rule's No to a guess asked before is a repeat too."""
        traj = self._live()
        question = question if isinstance(question, str) else ""
        decided = rules.rule_verdict(question, traj.secret, self.config)
        if decided is not None and decided[0] is not Verdict.NO:
            verdict, reason = decided
            return JudgeAnswer(verdict, raw=f"rule: {reason}")
        if rules.normalise_question(question) in self._asked:
            return JudgeAnswer(Verdict.REPEATED, raw="rule: already asked")
        if decided is not None:
            return JudgeAnswer(decided[0], raw=f"rule: {decided[1]}")
        return JudgeRequest(
            traj.secret, question, tuple(traj.turns), judge_seed(traj.seed, len(traj.turns))
        )

    def finish_turn(
        self,
        question: str,
        request: JudgeRequest | JudgeAnswer,
        answer: JudgeAnswer | None,
        latency_ms: float | None = None,
    ) -> StepResult:
        traj = self._live()
        question = question if isinstance(question, str) else ""
        final = request if isinstance(request, JudgeAnswer) else answer
        if final is None:
            raise ValueError("a judge answer is required when the rules did not decide")
        verdict = final.verdict
        if verdict is Verdict.FINISHED and not isinstance(request, JudgeAnswer):
            verdict = Verdict.YES  # the judge said finished but the secret was not named
        if verdict not in (Verdict.INVALID,):
            self._asked.add(rules.normalise_question(question))
        turn = Turn(
            index=len(traj.turns),
            question=question[:MAX_STORED_QUESTION_CHARS],
            verdict=verdict,
            feedback=rules.feedback(verdict, final.raw),
            judge_raw=final.raw,
            reward=reward_parts(verdict, self.config),
            latency_ms=latency_ms,
        )
        if final.votes is not None:
            turn.extra["votes"] = final.votes
            turn.extra["disagreement"] = final.disagreement
        if final.p_yes is not None:
            turn.extra["p_yes"] = final.p_yes
        traj.turns.append(turn)
        won = verdict is Verdict.FINISHED
        if won:
            traj.outcome = Outcome.WON
        elif len(traj.turns) >= self.config.max_turns:
            traj.outcome = Outcome.LOST
        return StepResult(turn=turn, done=traj.outcome is not Outcome.PLAYING, won=won)

    def _live(self) -> Trajectory:
        if self.trajectory is None:
            raise RuntimeError("call reset(secret, seed) before step()")
        if self.trajectory.outcome is not Outcome.PLAYING:
            raise GameOverError(
                f"the game is over ({self.trajectory.outcome.value}); start a new one"
            )
        return self.trajectory


def replay(
    judge: Judge, secret: str, seed: int, questions: Sequence[str], config: GameConfig | None = None
) -> Trajectory:
    """Play a fixed list of questions (stops early when the game ends)."""
    env = TwentyQuestions(judge, config)
    env.reset(secret, seed)
    for q in questions:
        if env.step(q).done:
            break
    assert env.trajectory is not None
    return env.trajectory
