"""Multi-turn GRPO with StarPO (trajectory) or ΔBelief/CIA (per-turn) credit: `run(config,
reporter, ...)` in training.grpo.trainer (imported lazily, so importing the config stays cheap)."""

from training.grpo.config import GRPOConfig


def run(*args, **kwargs):
    from training.grpo.trainer import run as _run

    return _run(*args, **kwargs)


__all__ = ["GRPOConfig", "run"]
