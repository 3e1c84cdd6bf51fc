"""Several LoRA actors on one base model in memory: one adapter per actor (peft multi-adapter).

When trainable `hf` actors with `training.lora` name the very same `model`, the first loads it and
the others add their own named adapter to the same modules instead of loading a copy. Each actor
then sees the shared module through an `AdapterBound`: any use of it (attribute, call, generate,
train/eval) first makes that actor's adapter the only active one, and peft's `set_adapter` leaves
only that adapter's weights with `requires_grad`, so a backward pass through actor A never writes
a gradient into B's adapter. `parameters()` is the actor's own adapter (its optimizer and its
gradient clipping see nothing else). The KL reference of every actor is the base: all adapters
disabled (`lora.adapters_disabled`).

Safe because the loop is sequential: a phase works on one actor at a time, and every entry into a
model goes through the actor's own `AdapterBound`.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any, Iterator

import torch

from ..spec.runspec_types import Actor as ActorSection, ActorTrainingLora, to_dict
from .lora import lora_config

FIRST_ADAPTER = "default"  # the adapter `lora.apply_lora` injects (peft's default name)


def base_key(actor: ActorSection | Mapping[str, Any]) -> str | None:
    """Actors with equal keys share one base; None = this actor never shares. (gpu_ids.py passes the actor's
    JSON document, the actors its typed section.)"""
    actor = ActorSection.from_dict(actor) if isinstance(actor, Mapping) else actor
    if actor.backend != "hf" or not actor.trainable or actor.training.lora is None:
        return None
    return json.dumps(to_dict(actor.model), sort_keys=True)


def activate(model: torch.nn.Module, adapter: str) -> None:
    from peft.tuners.tuners_utils import BaseTunerLayer

    for module in model.modules():
        if isinstance(module, BaseTunerLayer):
            module.set_adapter(adapter)  # also: requires_grad only on this adapter's weights


def add_adapter(model: torch.nn.Module, lora: ActorTrainingLora | Mapping[str, Any], adapter: str) -> int:
    """Injects another named adapter into an already LoRA-adapted model; returns its parameter count."""
    from peft import inject_adapter_in_model  # optional: only runs with LoRA import peft

    config = lora_config(lora)
    with warnings.catch_warnings():  # peft warns that a second adapter is being added: that is the point
        warnings.filterwarnings("ignore", message="Already found a `peft_config`")
        inject_adapter_in_model(config, model, adapter_name=adapter)
    model._troupe_lora_configs = {**getattr(model, "_troupe_lora_configs", {}), adapter: config}  # type: ignore[attr-defined]
    return sum(p.numel() for p in adapter_parameters(model, adapter))


def adapter_parameters(model: torch.nn.Module, adapter: str) -> list[torch.nn.Parameter]:
    # peft names them `...lora_A.<adapter>.weight` / `...lora_B.<adapter>.weight`.
    return [p for name, p in model.named_parameters() if "lora_" in name and f".{adapter}." in name]


class AdapterBound:
    """One actor's handle on a shared LoRA model; see the module docstring."""

    def __init__(self, model: torch.nn.Module, adapter: str, lora_config: Any):
        object.__setattr__(self, "_shared", model)
        object.__setattr__(self, "_troupe_adapter", adapter)
        object.__setattr__(self, "_troupe_lora_config", lora_config)

    def _activate(self) -> torch.nn.Module:
        model = object.__getattribute__(self, "_shared")
        activate(model, object.__getattribute__(self, "_troupe_adapter"))
        return model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._activate(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._activate(), name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._activate()(*args, **kwargs)

    def parameters(self, recurse: bool = True) -> Iterator[torch.nn.Parameter]:  # noqa: ARG002
        model = self._activate()
        return iter(adapter_parameters(model, self._troupe_adapter))

    def named_parameters(self, *args: Any, **kwargs: Any) -> Iterator[tuple[str, torch.nn.Parameter]]:
        model = self._activate()
        return ((n, p) for n, p in model.named_parameters(*args, **kwargs) if "lora_" in n and f".{self._troupe_adapter}." in n)
