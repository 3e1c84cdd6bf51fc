"""LoRA adapters (peft), injected into the plain transformers model.

`peft.inject_adapter_in_model` adds LoRA layers in place, so the model keeps its own class and
the trainer's log-prob path (body + LM head) is unchanged. Only the adapter weights train (the
optimizer gets only parameters with requires_grad). The KL reference is the same model with
its adapters disabled (no second copy in memory). A checkpoint holds the adapter only
(`adapter_model.safetensors` + `adapter_config.json`, peft's names) and the tokenizer.
peft is imported only when a spec asks for LoRA.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterator

import torch

from ..spec import SpecError
from ..spec.runspec_types import ActorTrainingLora


def peft_available() -> bool:
    try:
        import peft  # noqa: F401
    except ImportError:
        return False
    return True


def lora_config(lora: ActorTrainingLora | Mapping[str, Any]) -> Any:
    """peft's LoraConfig for the actor's `training.lora` (typed, or its JSON document)."""
    from peft import LoraConfig  # optional: only runs with LoRA import peft

    lora = ActorTrainingLora.from_dict(lora) if isinstance(lora, Mapping) else lora
    return LoraConfig(r=int(lora.rank), lora_alpha=float(lora.alpha), lora_dropout=float(lora.dropout), target_modules=list(lora.target_modules))


def apply_lora(model: torch.nn.Module, lora: ActorTrainingLora | Mapping[str, Any], actor_index: int) -> int:
    """Inject LoRA into `model`, freeze everything else; returns the number of trainable parameters."""
    from peft import inject_adapter_in_model  # optional: only runs with LoRA import peft

    lora = ActorTrainingLora.from_dict(lora) if isinstance(lora, Mapping) else lora
    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    missing = [m for m in lora.target_modules if m not in names]
    if missing:
        raise SpecError.at(
            f"actors.{actor_index}.training.lora.targetModules",
            f"the model has no module named {', '.join(missing)} (it has e.g. {', '.join(sorted(n for n in names if n.endswith('proj'))[:8])})",
        )
    config = lora_config(lora)
    inject_adapter_in_model(config, model)
    model._troupe_lora_config = config  # type: ignore[attr-defined]
    trainable = 0
    for name, p in model.named_parameters():
        p.requires_grad_("lora_" in name)
        trainable += p.numel() if p.requires_grad else 0
    return trainable


def has_lora(model: torch.nn.Module) -> bool:
    return hasattr(model, "_troupe_lora_config")


@contextlib.contextmanager
def adapters_disabled(model: torch.nn.Module) -> Iterator[None]:
    """The base model: every LoRA layer off for the duration."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    layers = [m for m in model.modules() if isinstance(m, BaseTunerLayer)]
    for layer in layers:
        layer.enable_adapters(False)
    try:
        yield
    finally:
        for layer in layers:
            layer.enable_adapters(True)


def save_adapter(model: torch.nn.Module, folder: Path, full_state: dict[str, torch.Tensor] | None = None) -> None:
    """Writes the adapter; `full_state` is the model's gathered state dict when its parameters are sharded."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    # A model shared by several actors (shared_lora.py) saves only this actor's adapter.
    adapter = getattr(model, "_troupe_adapter", "default")
    adapter_state = get_peft_model_state_dict(model, state_dict=full_state, adapter_name=adapter)
    state = {k: v.detach().cpu().contiguous() for k, v in adapter_state.items()}
    save_file(state, str(folder / "adapter_model.safetensors"))
    model._troupe_lora_config.save_pretrained(str(folder))  # type: ignore[attr-defined]
