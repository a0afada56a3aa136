"""Evaluation jobs: guesser × judge × words × k samples, played in lock-step batches."""

from training.evaluation.config import EvaluationConfig
from training.evaluation.runner import run

__all__ = ["EvaluationConfig", "run"]
