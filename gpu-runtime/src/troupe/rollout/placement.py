"""Where each rollout worker samples and how the weights reach it (`rollout.workers`, workers.py).

    processes: true   every worker on the CPU; the weights broadcast over a gloo group (or, feeding async
                      rollouts, through shared memory: workers.py says why)
    gpus: [ids]       worker i on GPU ids[i] (`torch.cuda.set_device`), its sampling copy there; the weights
                      broadcast over an NCCL group, tensors on the devices, one parameter at a time in chunks

The NCCL path cannot run on a host without CUDA. Its tests run it with a stand-in (`stand_in`): the same code path,
device assignment and chunking, with the process group's backend named "gloo" and the tensors kept on the CPU, and
each worker reports the device it was told to use.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.distributed as dist

HOST = "127.0.0.1"  # the workers run on the trainer's host


@dataclass(frozen=True)
class WorkerPlacement:
    devices: tuple[str, ...]  # what worker i is told to sample on: "cpu" or "cuda:<id>"
    backend: str  # the weight broadcast's process group: "gloo" or "nccl" (GROUPS)
    stand_in: str | None = None  # tests without CUDA only: the device tensors really go to (None in every run)

    @property
    def on_gpus(self) -> bool:
        return any(d.startswith("cuda") for d in self.devices)


def placement_of(workers: Any) -> WorkerPlacement:
    """The typed `rollout.workers` section's placement."""
    if workers.gpus is not None:
        return WorkerPlacement(tuple(f"cuda:{i}" for i in workers.gpus), "nccl")
    return WorkerPlacement(("cpu",) * workers.count, "gloo")


def take_device(placement: WorkerPlacement, index: int) -> torch.device:
    """In worker `index`: its device, made the process's current CUDA device (NCCL's collectives use it)."""
    told = torch.device(placement.devices[index])
    if placement.stand_in is not None:
        return torch.device(placement.stand_in)
    if told.type == "cuda":
        torch.cuda.set_device(told)
    return told


def _gloo(store: Any, rank: int, size: int, timeout: datetime.timedelta) -> Any:
    options = dist.ProcessGroupGloo._Options()
    options._devices = [dist.ProcessGroupGloo.create_device(hostname=HOST)]
    options._timeout = timeout
    return dist.ProcessGroupGloo(store, rank, size, options)


def _nccl(store: Any, rank: int, size: int, timeout: datetime.timedelta) -> Any:
    # A group of its own over the pool's store (not the default group: a run may have one of its own); each rank's
    # tensors lie on its current device (take_device). Built against the documented class, not run here (no CUDA).
    options = dist.ProcessGroupNCCL.Options()
    options._timeout = timeout
    return dist.ProcessGroupNCCL(store, rank, size, options)


GROUPS: dict[str, Callable[[Any, int, int, datetime.timedelta], Any]] = {"gloo": _gloo, "nccl": _nccl}


def weight_group(backend: str, store: Any, rank: int, size: int, timeout_s: float) -> Any:
    return GROUPS[backend](store, rank, size, datetime.timedelta(seconds=timeout_s))
