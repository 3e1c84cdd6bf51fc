"""Ranks of one run: who this process is, and the few collectives the training loop needs.

One run has one set of ranks (`actors[].placement.gpus` or `.processes`, the same count for every
actor that names any). Every rank runs the whole loop: rollouts and rewards on every rank in lockstep
(a sharded model's forward needs every rank), then rank 0's batch is handed to all ranks
(`broadcast_object`) so they train on the same data even where a GPU kernel is not bitwise
reproducible, each rank takes its slice of the rows, and gradients are summed over ranks. Rank 0
alone writes events and checkpoints' shared files.

With one rank nothing here touches torch.distributed: the single-process path is the plain loop.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class RankContext:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def row_slice(self, rows: int) -> tuple[int, int]:
        """This rank's contiguous slice [start, end) of `rows` rows (the first ranks take one more when uneven)."""
        base, extra = divmod(rows, self.world_size)
        start = self.rank * base + min(self.rank, extra)
        return start, start + base + (1 if self.rank < extra else 0)

    def broadcast_object(self, value: Any) -> Any:
        """Rank 0's `value` on every rank (pickled; for batches of token ids, rewards, decisions)."""
        if not self.distributed:
            return value
        box = [value if self.is_main else None]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def sum_floats(self, values: Sequence[float]) -> list[float]:
        """Element-wise sum over ranks, in float64 (so adding ranks' shares does not lose precision)."""
        if not self.distributed:
            return [float(v) for v in values]
        t = torch.tensor(list(values), dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t.tolist()

    def any(self, flag: bool) -> bool:
        """True on every rank when any rank says True (a stop signal that reached one rank stops all)."""
        if not self.distributed:
            return flag
        t = torch.tensor([1 if flag else 0], dtype=torch.int64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item())

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()


SINGLE = RankContext()


def rank_context_from_env() -> RankContext:
    """The context torch.distributed.run (or the Ray launcher) set up in the environment; single otherwise."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return SINGLE
    return RankContext(int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0")))


def init_process_group(ctx: RankContext, device: torch.device, needed_alone: bool = False) -> bool:
    """gloo on CPU, NCCL on CUDA (with the CPU side on gloo, for object broadcasts). A single process gets a
    one-rank group only when `needed_alone` (fsdp2 shards over a device mesh even of one rank, e.g. for
    its CPU offload on one GPU). Returns whether this call created the group."""
    if dist.is_initialized() or not (ctx.distributed or needed_alone):
        return False
    backend = "cpu:gloo,cuda:nccl" if device.type == "cuda" else "gloo"
    kwargs: dict[str, Any] = {}
    if device.type == "cuda":
        kwargs["device_id"] = device
    if not ctx.distributed:
        import tempfile

        kwargs["init_method"] = "file://" + tempfile.mkstemp(prefix="troupe-pg-")[1]
    dist.init_process_group(backend=backend, rank=ctx.rank, world_size=ctx.world_size, **kwargs)
    return True


def destroy_process_group() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def run_ranks(spec: dict[str, Any]) -> int:
    """Ranks the spec asks for: the GPUs or processes any local actor names (the contracts keep them equal)."""
    ranks = 1
    for actor in spec["actors"]:
        if actor["backend"] == "openai":
            continue
        placement = actor["placement"]
        ranks = max(ranks, len(placement["gpus"]), int(placement.get("processes") or 1))
    return ranks
