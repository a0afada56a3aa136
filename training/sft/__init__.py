"""Turn-level SFT: `run(config, reporter, ...)` in training.sft.trainer (imported lazily, so that
importing the config stays cheap in the web process)."""

from training.sft.config import SFTJobConfig


def run(*args, **kwargs):
    from training.sft.trainer import run as _run

    return _run(*args, **kwargs)


__all__ = ["SFTJobConfig", "run"]
