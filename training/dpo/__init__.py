"""Multi-turn DPO: `run(config, reporter, ...)` in training.dpo.trainer (imported lazily)."""

from training.dpo.config import DPOJobConfig


def run(*args, **kwargs):
    from training.dpo.trainer import run as _run

    return _run(*args, **kwargs)


__all__ = ["DPOJobConfig", "run"]
