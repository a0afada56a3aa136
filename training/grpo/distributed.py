"""GRPO across processes (`accelerate launch` / torchrun; gloo on the CPU, NCCL on GPUs).

Data parallel by groups: a step's groups are dealt to the ranks (group g to rank g mod N), so a
secret's G games are played on one rank; the games are then gathered, in step order, on every
rank, which therefore computes the same rewards, advantages, StarPO-S filter and metrics as one
process would. Each rank back-propagates only its own games' rows, with the aggregation weights
of the whole mini-batch, and the gradients are summed across ranks before clipping: the update is
the one-process update, whatever N is (`Ranks.sum_gradients`). Rank 0 reports and writes
checkpoints; a stop request is rank 0's decision, broadcast to all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class Ranks:
    """This process's place among `world` processes; with `world` 1 every collective is a no-op."""

    def __init__(self, world: int = 1, rank: int = 0):
        if world > 1:
            import torch.distributed as dist

            if not dist.is_initialized():
                raise RuntimeError("GRPO across processes needs torch.distributed initialised")
        self.world, self.rank = world, rank

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def owns(self, group: int) -> bool:
        """Whether this rank plays (and back-propagates) group `group` of a step."""
        return group % self.world == self.rank

    def play_shared(self, groups: Sequence[int], play: Callable[[list[int]], list[T]]) -> list[T]:
        """Play the items whose group this rank owns (`play` gets their indices and returns one
        result each), then gather everyone's results in the items' order."""
        mine = [i for i, g in enumerate(groups) if self.owns(g)]
        results = play(mine) if mine else []
        if self.world == 1:
            return results
        import torch.distributed as dist

        gathered: list[Any] = [None] * self.world
        dist.all_gather_object(gathered, list(zip(mine, results)))
        out: list[Any] = [None] * len(groups)
        for pairs in gathered:
            for i, result in pairs:
                out[i] = result
        return out

    def same_start(self, params: Sequence[Any]) -> None:
        """Every rank starts from rank 0's trainable weights (as DDP does when it wraps a model)."""
        if self.world == 1:
            return
        import torch.distributed as dist

        for p in params:
            dist.broadcast(p.data, src=0)

    def sum_gradients(self, params: Sequence[Any]) -> None:
        """Sum the parameters' gradients over the ranks (a rank without rows this mini-batch
        contributes zeros), in one flat all-reduce."""
        if self.world == 1:
            return
        import torch
        import torch.distributed as dist

        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        dist.all_reduce(flat)
        offset = 0
        for p in params:
            n = p.grad.numel()
            p.grad.copy_(flat[offset : offset + n].view_as(p.grad))
            offset += n

    def sum_floats(self, values: dict[str, float]) -> dict[str, float]:
        """Each key's sum over the ranks."""
        if self.world == 1:
            return values
        import torch
        import torch.distributed as dist

        keys = sorted(values)
        t = torch.tensor([float(values[k]) for k in keys], dtype=torch.float64)
        dist.all_reduce(t)
        return dict(zip(keys, t.tolist()))

    def main_says(self, flag: bool) -> bool:
        """Rank 0's `flag`, on every rank (a stop request is decided once, for all)."""
        if self.world == 1:
            return flag
        import torch.distributed as dist

        box = [flag if self.is_main else None]
        dist.broadcast_object_list(box, src=0)
        return bool(box[0])

    def barrier(self) -> None:
        if self.world > 1:
            import torch.distributed as dist

            dist.barrier()
