"""Weights a run saved, read back into a model: a LoRA adapter onto its base (checkpointing.py, when a run
resumes; run_source.py, when a run starts from another run's adapter), and the error of a checkpoint that
cannot be read."""

from __future__ import annotations

from pathlib import Path

import torch


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed from; the message says which file or actor."""


def _device_of(model: torch.nn.Module) -> torch.device:
    """Where a model's weights are (an actor's model sits on the actor's device): loaded weights go there."""
    return next(model.parameters()).device


def _load_adapter(model: torch.nn.Module, folder: Path, device: torch.device | None = None) -> None:
    """An adapter's weights into `model` (on the model's device unless told)."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    device = device or _device_of(model)
    path = folder / "adapter_model.safetensors"
    if not path.is_file():
        raise CheckpointError(f"{folder}: no adapter_model.safetensors")
    adapter = getattr(model, "_troupe_adapter", "default")  # one actor's adapter on a shared base (shared_lora.py)
    result = set_peft_model_state_dict(model, load_file(str(path), device=str(device)), adapter_name=adapter)
    unexpected = getattr(result, "unexpected_keys", [])
    if unexpected:
        raise CheckpointError(f"{path}: adapter weights the model does not have: {', '.join(unexpected[:5])}")
