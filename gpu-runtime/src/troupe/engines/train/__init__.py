"""Train backends, one class per `actors[].training.backend`; the heavy ones are imported only when asked for."""

from __future__ import annotations

import importlib

import torch

from .base import BackendSettings, TrainBackend, make_optimizer, tensor_bytes


# name -> (module, class): imported only when an actor asks for it (fsdp2 needs torch.distributed's FSDP, deepspeed
# needs DeepSpeed and Accelerate; a CPU run with the torch backend loads neither).
BACKENDS: dict[str, tuple[str, str]] = {
    "torch": (".torch", "TorchBackend"),
    "fsdp2": (".fsdp2", "FSDP2Backend"),
    "deepspeed": (".deepspeed", "DeepSpeedBackend"),
}


def build_backend(model: torch.nn.Module, settings: BackendSettings) -> TrainBackend:
    """The actor's `training.backend`, looked up by name (a new backend is a class and a line in BACKENDS)."""
    name = settings.config.backend
    if name not in BACKENDS:
        raise ValueError(f"unknown training backend {name!r}")
    module, cls = BACKENDS[name]
    backend: type[TrainBackend] = getattr(importlib.import_module(module, __name__), cls)
    return backend(model, settings)


__all__ = ["BackendSettings", "TrainBackend", "build_backend", "make_optimizer", "tensor_bytes"]
