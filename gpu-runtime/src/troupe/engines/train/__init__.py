"""Train backends, one class per `actors[].training.backend`; the heavy ones are imported only when asked for."""

from __future__ import annotations

import torch

from .base import BackendSettings, TrainBackend, make_optimizer, tensor_bytes


def build_backend(model: torch.nn.Module, settings: BackendSettings) -> TrainBackend:
    name = settings.training.get("backend", "torch")
    if name == "torch":
        from .torch import TorchBackend

        return TorchBackend(model, settings)
    if name == "fsdp2":
        from .fsdp2 import FSDP2Backend

        return FSDP2Backend(model, settings)
    if name == "deepspeed":
        from .deepspeed import DeepSpeedBackend

        return DeepSpeedBackend(model, settings)
    raise ValueError(f"unknown training backend {name!r}")


__all__ = ["BackendSettings", "TrainBackend", "build_backend", "make_optimizer", "tensor_bytes"]
