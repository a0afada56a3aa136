"""The knowledge stage (DESIGN.md §6): `run(config, reporter, ...)` in
training.knowledge.trainer."""

from training.knowledge.config import KnowledgeJobConfig


def run(*args, **kwargs):
    from training.knowledge.trainer import run as _run

    return _run(*args, **kwargs)


__all__ = ["KnowledgeJobConfig", "run"]
