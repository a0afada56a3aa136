"""The evaluation job's runner: every core while it plays, and the precision it ran at."""

from __future__ import annotations

import io
import os

import pytest
import torch

from games.guessers.base import Ask, Guesser
from games.judges.kb import KBJudge
from training.evaluation import EvaluationConfig, run
from training.reporting import ConsoleReporter


class ThreadCountingGuesser(Guesser):
    """Asks the same question every turn; records torch's threads while it asks."""

    name = "counting"

    def __init__(self):
        self.threads: list[int] = []

    def ask_batch(self, states):
        self.threads.append(torch.get_num_threads())
        return [Ask(question="Is it a dog?") for _ in states]


def test_games_use_every_core_of_the_process_and_the_precision_is_recorded(tmp_path):
    guesser, stored = ThreadCountingGuesser(), []
    torch.set_num_threads(1)  # what a worker starts with (OMP_NUM_THREADS=1)
    config = EvaluationConfig(guesser="g", judge="kb", samples=1, max_turns=2, precision="bf16")
    result = run(
        config,
        ConsoleReporter(tmp_path, stream=io.StringIO()),
        guesser=guesser,
        judge=KBJudge(),
        words=["dog", "cat"],
        store=lambda games, samples: stored.extend(games),
    )
    assert guesser.threads and set(guesser.threads) == {len(os.sched_getaffinity(0))}
    assert torch.get_num_threads() == 1  # back after the run
    assert len(stored) == 2
    # neither player runs a model here: nothing resolved
    assert result["precision"] == {"asked": "bfloat16", "guesser": None, "judge": None}


def test_precision_is_checked_and_normalised():
    assert EvaluationConfig(guesser="g", judge="kb").precision == "auto"
    assert EvaluationConfig(guesser="g", judge="kb", precision="fp32").precision == "float32"
    with pytest.raises(ValueError, match="precision: unknown precision 'half'"):
        EvaluationConfig(guesser="g", judge="kb", precision="half")
