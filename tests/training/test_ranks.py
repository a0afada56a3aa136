"""SFT / DPO across processes (training.common.ranks), in 2 gloo processes: the training rows are
rank 0's alone, and a stop request is rank 0's on every rank, so every rank's trainer (the
ReporterCallback of training.common.trainer) stops and saves at the same step."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

from training.common.ranks import from_rank_zero, main_says


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Reporter:
    def __init__(self, stop: bool):
        self.stop = stop

    def should_stop(self) -> bool:
        return self.stop


def _rank(rank: int, world: int, port: int, folder: str) -> None:
    import torch.distributed as dist

    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    built: list[int] = []
    rows = from_rank_zero(lambda: built.append(rank) or [{"built_by": rank}])
    # rank 0's reporter sees the job's stop request; the others' never do (RankReporter)
    result = {"rows": rows, "built": built, "stop": main_says(rank == 0)}
    result["rank_one_says"] = main_says(rank == 1)
    Path(folder, f"rank-{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


@pytest.mark.slow
def test_rows_and_the_stop_are_rank_zeros_on_every_rank(tmp_path):
    import torch.multiprocessing as mp

    mp.spawn(_rank, args=(2, _free_port(), str(tmp_path)), nprocs=2)
    results = [json.loads((tmp_path / f"rank-{r}.json").read_text()) for r in (0, 1)]
    assert [r["rows"] for r in results] == [[{"built_by": 0}]] * 2
    assert [r["built"] for r in results] == [[0], []]  # rank 1 built nothing
    assert [r["stop"] for r in results] == [True, True]
    assert [r["rank_one_says"] for r in results] == [False, False]


def test_a_stop_the_ranks_agree_on_stops_the_trainer_saving_first(monkeypatch):
    from training.common import trainer

    asked = []
    monkeypatch.setattr(trainer, "main_says", lambda flag: asked.append(flag) or True)
    callback = trainer.ReporterCallback(_Reporter(stop=False), {}, is_adapter=False)
    control = SimpleNamespace(should_save=False, should_training_stop=False)
    callback.on_step_end(None, None, control)  # e.g. rank 1: its reporter never asks, rank 0 did
    assert asked == [False] and callback.stopped
    assert control.should_training_stop and control.should_save


def test_in_one_process_each_is_the_plain_value(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert from_rank_zero(lambda: [1, 2]) == [1, 2]
    assert main_says(True) is True and main_says(False) is False
