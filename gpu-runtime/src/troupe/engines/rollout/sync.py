"""Weight sync from a train backend to a rollout engine that holds its own copy (vLLM), after every update.

    wake(["weights"]) -> push_weights(full parameters, one at a time) -> reset_prefix_cache() -> wake(["kv_cache"])

and `sleep(level)` before the actors train. The parameters come from the backend's `full_parameters`
(FSDP2 gathers each full tensor, ZeRO-3 each gathered parameter; backends/), renamed to the Hugging
Face names a vLLM model's `load_weights` expects. A LoRA actor's adapter is merged on the way
(W + scale * B @ A, one target layer at a time), so the engine samples exactly the trainer's policy.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import torch

from .base import RolloutEngine

PEFT_PREFIX = "base_model.model."


@dataclass
class SyncReport:
    tensors: int
    bytes: int
    seconds: float


def lora_scale(config: Any, adapter: str) -> float:
    """peft's scaling of one adapter: alpha / r (alpha / sqrt(r) with rsLoRA)."""
    r = config.r if not isinstance(config.r, dict) else config.r[adapter]
    alpha = float(config.lora_alpha)
    return alpha / (r**0.5) if getattr(config, "use_rslora", False) else alpha / r


def merged_weights(named: Iterable[tuple[str, torch.Tensor]], adapter: str | None, scale: float) -> Iterator[tuple[str, torch.Tensor]]:
    """Hugging Face names and tensors, with LoRA layers (peft's `.base_layer.`, `.lora_A.<a>.`,
    `.lora_B.<a>.`) merged into plain weights. Without LoRA the names pass through (peft's outer
    prefix dropped). Other adapters of a shared base are skipped. Holds at most one layer's three
    tensors at a time."""
    pending: dict[str, dict[str, torch.Tensor]] = {}
    for name, tensor in named:
        if name.startswith(PEFT_PREFIX):
            name = name[len(PEFT_PREFIX) :]
        if ".lora_A." in name or ".lora_B." in name:
            prefix, rest = name.split(".lora_A." if ".lora_A." in name else ".lora_B.", 1)
            which = "A" if ".lora_A." in name else "B"
            if rest.split(".", 1)[0] != adapter:
                continue
            pending.setdefault(prefix, {})[which] = tensor
        elif ".base_layer." in name:
            prefix, param = name.split(".base_layer.", 1)
            if param != "weight":
                yield f"{prefix}.{param}", tensor
                continue
            pending.setdefault(prefix, {})["W"] = tensor
        elif "lora_" in name:
            continue  # lora_embedding_*, lora_magnitude_*: not supported by merge; see vllm_issues
        else:
            yield name, tensor
            continue
        parts = pending.get(prefix, {})
        if "W" in parts and (adapter is None or ("A" in parts and "B" in parts)):
            w = parts["W"]
            if adapter is not None:
                delta = (parts["B"].float() @ parts["A"].float()) * scale
                w = (w.float() + delta).to(w.dtype)
            yield f"{prefix}.weight", w
            del pending[prefix]
    if pending:
        raise RuntimeError(f"LoRA layers without their base weight or adapter pair: {sorted(pending)[:4]}")


def push(engine: RolloutEngine, weights: Iterable[tuple[str, torch.Tensor]]) -> SyncReport:
    """The documented order; returns what was loaded."""
    started = time.perf_counter()
    counted = _Counted(weights)
    engine.wake(["weights"])
    n = engine.push_weights(counted)
    engine.reset_prefix_cache()
    engine.wake(["kv_cache"])
    return SyncReport(n, counted.bytes, time.perf_counter() - started)


class _Counted:
    def __init__(self, weights: Iterable[tuple[str, torch.Tensor]]):
        self.weights = weights
        self.bytes = 0

    def __iter__(self) -> Iterator[tuple[str, torch.Tensor]]:
        for name, t in self.weights:
            self.bytes += t.numel() * t.element_size()
            yield name, t
