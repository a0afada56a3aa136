"""20 Questions engine: pure Python, imports neither Django nor torch at module level."""

from games.engine import GameOverError, TwentyQuestions
from games.types import GameConfig, JudgeAnswer, Outcome, StepResult, Trajectory, Turn, Verdict

__all__ = [
    "GameConfig",
    "GameOverError",
    "JudgeAnswer",
    "Outcome",
    "StepResult",
    "Trajectory",
    "Turn",
    "TwentyQuestions",
    "Verdict",
]
