"""Judges (answerers). `build_judge(spec)` lives in games.registry."""

from games.judges.base import Judge, JudgeRequest, UnknownSecretError

__all__ = ["Judge", "JudgeRequest", "UnknownSecretError"]
