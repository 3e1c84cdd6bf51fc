"""The residency manager's use of the host buffer pool (host_buffers.py): which residents it serves,
what it sets aside before the first step, and one pooled move.

Served: frozen models and KL references (parameters only) and actors on a backend that moves its
states with the base `TrainBackend.move_part` (the torch backend). FSDP2 moves its sharded
parameters through `Module.to` and DeepSpeed through `offload_states(pin_memory=...)`: they keep
their own paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..engines.train.base import TrainBackend
from .host_buffers import HostBuffers, move_optimizer, move_params, nbytes, optimizer_reserve_bytes, _aligned

if TYPE_CHECKING:
    from ..residency import ResidencyManager, Resident


def pooled(r: Resident) -> bool:
    return r.backend is None or type(r.backend).move_part is TrainBackend.move_part


def _params(r: Resident) -> list[torch.nn.Parameter]:
    module = r.backend.module if r.backend is not None else r.module
    assert module is not None
    return list(module.parameters())


def pooled_move(r: Resident, part: str, target: torch.device, to_host: bool) -> int:
    assert r.host is not None
    if part == "params":
        return move_params(r.host, r.name, _params(r), target, to_host)
    assert r.backend is not None and r.backend.optimizer is not None
    return move_optimizer(r.host, r.name, r.backend.optimizer, target, to_host)


def prepare(manager: ResidencyManager, pool: HostBuffers) -> int:
    for r in manager.residents.values():
        if not pooled(r):
            continue
        if manager._may_offload(r, "params"):
            pool.reserve(r.name, "params", sum(_aligned(nbytes(p)) for p in _params(r)))
            if r.backend is not None:
                # Gradients stay after a step (zero_grad comes at the next update's start) and move with their
                # parameters: without their own slab every first move of them allocated pinned memory per tensor,
                # ~1 GB/s on an H200 (2026-11-28: "cycle 2 offload b (params)" 1.1 GB/s against a 55 GB/s copy).
                pool.reserve(r.name, "grads", sum(_aligned(nbytes(p)) for p in _params(r) if p.requires_grad))
        if r.backend is not None and manager._may_offload(r, "optimizer"):
            pool.reserve(r.name, "optimizer", optimizer_reserve_bytes(r.backend.optimizer, _params(r)))
        r.host = pool
    return pool.reserved_bytes
