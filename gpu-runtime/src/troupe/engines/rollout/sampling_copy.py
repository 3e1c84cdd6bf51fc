"""A bf16 copy of a trainable actor's float32 master weights, for the HF engine to sample with.

Why: an actor trained in bf16 (autocast) keeps float32 parameters, and the HF engine sampled with
them in float32: on the H200 that decode loop read 1.84 GiB of weights per token step instead of
0.92 (2,616 tok/s at the Qwen2.5-0.5B shape against a 33,958 tok/s floor, where bf16 weights had a
199,992 floor). The update's forward multiplies in bf16 under autocast anyway (each fp32 weight
rounded to bf16 per matmul, as `.to(torch.bfloat16)` rounds it), so sampling with the rounded
weights computes what the trainer computes.

The copy is made once per module (a deep copy whose parameters are bf16 tensors and whose buffers
are the source's own, e.g. rotary `inv_freq` stays float32) and refreshed in place before every
`generate` (`copy_` into the same storages: addresses stay fixed for compiled/CUDA-graph steps),
so it always equals the trainer's current weights cast; the refresh reads 4 and writes 2 bytes per
parameter (~1 ms for 0.5B on an H200), far below one rollout. Costs 2 bytes per parameter of
device memory for as long as the actor lives.

Used on CUDA for a trainable, non-LoRA actor whose `training.precision` is bf16 and whose backend
computes with autocast (the torch backend; FSDP2 and DeepSpeed cast parameters themselves).
"""

from __future__ import annotations

import copy
import weakref
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from ...actors import Actor


class SamplingCopy:
    """`module` is a `dtype` copy of `source`; `refresh()` makes it equal `source`'s parameters cast."""

    def __init__(self, source: torch.nn.Module, dtype: torch.dtype = torch.bfloat16):
        self._source = weakref.ref(source)
        self.dtype = dtype
        memo: dict[int, Any] = {}
        for p in source.parameters():
            memo[id(p)] = torch.nn.Parameter(p.detach().to(dtype, copy=True), requires_grad=False)
        for b in source.buffers():
            memo[id(b)] = b  # shared, not cast
        self.module = copy.deepcopy(source, memo)
        self.module.eval()
        self._pairs = list(zip(source.parameters(), self.module.parameters()))
        self.refreshes = 0

    def refresh(self) -> torch.nn.Module:
        """Copies the source's current parameters into the copy's (cast), in place; returns the copy."""
        with torch.no_grad():
            for src, dst in self._pairs:
                if dst.device != src.device:  # the source was moved (residency): follow it once
                    dst.data = torch.empty(dst.shape, dtype=self.dtype, device=src.device)
                dst.copy_(src)
        self.refreshes += 1
        return self.module


_COPIES: "weakref.WeakKeyDictionary[torch.nn.Module, SamplingCopy]" = weakref.WeakKeyDictionary()


def sampling_module(model: torch.nn.Module, dtype: torch.dtype | None) -> torch.nn.Module:
    """The module to sample with: `model` itself (dtype None), or its refreshed `dtype` copy (made on
    first use and kept for the life of `model`)."""
    if dtype is None:
        return model
    held = _COPIES.get(model)
    if held is None or held.dtype != dtype:
        held = SamplingCopy(model, dtype)
        _COPIES[model] = held
    return held.refresh()


def wants_bf16_copy(device_type: str, trainable: bool, precision: str, uses_autocast: bool, lora: bool, fp32_params: bool) -> bool:
    """The rule: CUDA, a trainable full-parameter actor trained in bf16 by autocast over float32 masters."""
    return device_type == "cuda" and trainable and precision == "bf16" and uses_autocast and not lora and fp32_params


def sampling_dtype_for(actor: Actor) -> torch.dtype | None:
    """bf16 where `wants_bf16_copy` says so for this actor, else None (sample with the module itself)."""
    backend = actor.backend
    if backend is None:
        return None
    training = actor.section.training
    model = actor.loaded.model
    first = next(iter(model.parameters()), None)
    ok = wants_bf16_copy(
        actor.device.type,
        actor.trainable,
        training.precision,
        bool(getattr(backend, "uses_autocast", False)),
        training.lora is not None or getattr(model, "_troupe_lora_config", None) is not None,
        first is not None and first.dtype == torch.float32,
    )
    return torch.bfloat16 if ok else None
