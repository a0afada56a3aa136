"""The learned judge: LearnedJudgeJobConfig, and `run(config, reporter, ...)` in
training.judge.trainer (imported lazily: importing the config stays cheap in the web process)."""

from training.judge.config import LearnedJudgeJobConfig


def run(*args, **kwargs):
    from training.judge.trainer import run as _run

    return _run(*args, **kwargs)


__all__ = ["LearnedJudgeJobConfig", "run"]
