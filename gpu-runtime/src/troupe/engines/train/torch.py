"""`training.backend: "torch"`: the model as it is, on one device. With several ranks every rank holds a
full replica and gradients are summed over ranks after the last micro-batch (data parallel, as DDP does,
but once per optimizer step and in one flat buffer, so micro-batches need no `no_sync`)."""

from __future__ import annotations

from typing import Any, Iterator

import torch
import torch.distributed as dist
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

from .base import BackendSettings, TrainBackend, make_optimizer


class TorchBackend(TrainBackend):
    name = "torch"

    def __init__(self, model: torch.nn.Module, settings: BackendSettings):
        super().__init__(model, settings)
        self.optimizer = make_optimizer([p for p in model.parameters() if p.requires_grad], settings.config)

    def clip(self, max_norm: float) -> float:
        params = [p for p in self.module.parameters() if p.grad is not None]
        if self.settings.ctx.distributed and params:
            grads = [p.grad for p in params]
            flat = _flatten_dense_tensors(grads)
            dist.all_reduce(flat, op=dist.ReduceOp.SUM)
            for g, summed in zip(grads, _unflatten_dense_tensors(flat, grads)):
                g.copy_(summed)
        return float(torch.nn.utils.clip_grad_norm_(self.module.parameters(), max_norm))

    def full_parameters(self) -> Iterator[tuple[str, torch.Tensor]]:
        for name, p in self.module.named_parameters():
            yield name, p.detach()

    def full_state_dict(self) -> dict[str, torch.Tensor]:
        return self.module.state_dict() if self.settings.ctx.is_main else {}

    def load_full_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.module.load_state_dict(state, strict=False)

    def optimizer_state(self) -> dict[str, Any]:
        assert self.optimizer is not None
        return self.optimizer.state_dict()

    def load_optimizer_state(self, state: dict[str, Any]) -> None:
        assert self.optimizer is not None
        self.optimizer.load_state_dict(state)
