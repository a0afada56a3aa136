"""SFT and DPO across processes (`accelerate launch` / torchrun; the web app's `processes` > 1).

The trainers stay TRL's (DistributedDataParallel through accelerate); what is the run's, not the
trainer's, is decided once, by rank 0, for every rank:

- `from_rank_zero(build)`: the training rows (teacher games, DPO's scored pairs) are built by rank
  0 alone and sent to the others, so every rank shards the same dataset (each rank building its
  own would play every game N times, and sampled pairs would differ between ranks);
- `main_says(flag)`: a stop request is rank 0's (its reporter reads the job), broadcast, so every
  rank stops and saves at the same step.

In one process both are the plain value. Under a launcher that has not opened the process group
yet (`accelerate launch python -m training …`), the first call opens it as accelerate would.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def world_size() -> int:
    """The processes of this run (1 without a launcher); the process group is open when > 1."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        import torch.distributed as dist

        if not dist.is_initialized():
            from accelerate import PartialState

            PartialState()  # gloo on the CPU, NCCL on GPUs: the group the Trainer then joins
    return world


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


def from_rank_zero(build: Callable[[], T]) -> T:
    """`build()` on rank 0, its value on every rank (the others wait for it)."""
    if world_size() == 1:
        return build()
    import torch.distributed as dist

    box = [build() if rank() == 0 else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def main_says(flag: bool) -> bool:
    """Rank 0's `flag`, on every rank."""
    if world_size() == 1:
        return flag
    import torch.distributed as dist

    box = [bool(flag) if rank() == 0 else None]
    dist.broadcast_object_list(box, src=0)
    return bool(box[0])
