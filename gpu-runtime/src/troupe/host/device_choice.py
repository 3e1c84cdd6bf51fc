"""Which device a run's ranks use, and a guard that a model really is there.

`trainer.device: "auto"` means "the GPU when there is one" — except for CPU ranks: `placement.processes`
asks for CPU processes (hosts without GPUs, or a user who wants them on a GPU host), and one run never
mixes GPU ranks and CPU processes (spec/run_rules.py). Before this, a 2-process fsdp2 run on a host whose
torch saw CUDA put its shards on cuda:0 (torch's default device mesh follows the accelerator, not the
spec) and crashed in the first gather (issue #25, measured on an H200).
"""

from __future__ import annotations

from typing import Any, Iterable

import torch


def run_device_choice(spec: dict[str, Any]) -> str:
    """`trainer.device`, or "cpu" when any local actor is placed on CPU processes."""
    cpu_ranks = any(a["backend"] != "openai" and a["placement"].get("processes") is not None for a in spec["actors"])
    return "cpu" if cpu_ranks else spec["trainer"]["device"]


def local_tensors(tensors: Iterable[torch.Tensor]) -> Iterable[torch.Tensor]:
    """Each tensor, or its local shard when it is a DTensor (fsdp2)."""
    from torch.distributed.tensor import DTensor

    for t in tensors:
        yield t.to_local() if isinstance(t, DTensor) else t


def assert_on_device(module: torch.nn.Module, device: torch.device, what: str) -> None:
    """Every parameter and buffer of `module` (its local shards) on `device`'s type: a model that slipped
    onto another device fails here with its name, not later in a gather deep inside a forward."""
    for name, t in [*module.named_parameters(), *module.named_buffers()]:
        (local,) = local_tensors([t])
        if local.device.type != device.type:
            raise RuntimeError(f"{what}: {name} is on {local.device}, but this rank runs on {device} (a bug: please report it)")
