"""`training.backend: "fsdp2"`: torch's `fully_shard` (FSDP2), ZeRO-3 semantics. Each decoder layer and
the root are sharded over the run's ranks: parameters, gradients and optimizer state each live 1/N per
rank, and a layer's full parameters exist only while it runs. bf16 is FSDP2's MixedPrecisionPolicy
(bf16 compute on gathered parameters, fp32 sharded master weights, fp32 gradient reduction);
`offload.params` is its CPUOffloadPolicy (parameters, gradients and the optimizer step on the host).

FSDP2 averages gradients over ranks (a divide factor of 1 would need PREMUL_SUM, which gloo lacks), and
the loop already normalises each micro-batch's loss by the whole batch's size, so the loss is scaled by
the world size first: the average of N scaled shares is the one-process gradient.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.fsdp import CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, fully_shard
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor

from .base import BackendSettings, TrainBackend, make_optimizer


def shard_model(model: torch.nn.Module, settings: BackendSettings, trainable: bool = True) -> torch.nn.Module:
    """fully_shard each block the model says must not be split (its decoder layers), then the root."""
    kwargs: dict[str, Any] = {}
    if settings.bf16:
        kwargs["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    if trainable and settings.config.offload.params:
        # pin_memory asks for an accelerator: only on CUDA hosts (ENVIRONMENT.md, FSDP2 on CPU).
        kwargs["offload_policy"] = CPUOffloadPolicy(pin_memory=settings.device.type == "cuda")
    # The mesh on the rank's own device type: torch's default follows the host's accelerator, so CPU
    # ranks on a GPU host would shard onto cuda:0 (issue #25).
    kwargs["mesh"] = init_device_mesh(settings.device.type, (settings.ctx.world_size,))
    block_names = set(getattr(model, "_no_split_modules", None) or [])
    for module in model.modules():
        if type(module).__name__ in block_names:
            fully_shard(module, **kwargs)
    fully_shard(model, **kwargs)
    # The fused log-prob path runs the body without the root's forward, which would leave the root's
    # (embedding, head) parameters sharded: take the full forward (policy.py reads this flag).
    model._troupe_full_forward = True  # type: ignore[attr-defined]
    return model


class FSDP2Backend(TrainBackend):
    name = "fsdp2"
    shards = True
    uses_autocast = False  # MixedPrecisionPolicy casts the gathered parameters

    def __init__(self, model: torch.nn.Module, settings: BackendSettings):
        super().__init__(shard_model(model, settings), settings)
        params = [p for p in self.module.parameters() if p.requires_grad]
        self.optimizer = make_optimizer(params, settings.config, fused_ok=False)
        self._fsdp_modules = [m for m in self.module.modules() if isinstance(m, FSDPModule)]

    @contextlib.contextmanager
    def sampling(self) -> Iterator[None]:
        # Decoding is one forward per token: all-gathering every layer for each would dominate the step
        # (measured 5.3x one process on 2 CPU ranks). Gather once, keep full parameters for the rollout.
        for m in self._fsdp_modules:
            m.set_reshard_after_forward(False, recurse=False)
            m.unshard()
        try:
            yield
        finally:
            for m in self._fsdp_modules:
                m.set_reshard_after_forward(True, recurse=False)
                m.reshard()

    def loss_scale(self) -> float:
        return float(self.settings.ctx.world_size)

    def accumulate(self, last: bool) -> contextlib.AbstractContextManager[Any]:
        # Reduce-scatter only after the last micro-batch; earlier ones accumulate unsharded gradients.
        for m in self._fsdp_modules:
            m.set_requires_gradient_sync(last)
        return contextlib.nullcontext()

    def clip(self, max_norm: float) -> float:
        norm = torch.nn.utils.clip_grad_norm_(self.module.parameters(), max_norm)
        return float(norm.full_tensor() if isinstance(norm, DTensor) else norm)

    def full_parameters(self) -> Iterator[tuple[str, torch.Tensor]]:
        for name, p in self.module.named_parameters():
            yield name, (p.full_tensor() if isinstance(p, DTensor) else p).detach()

    def full_state_dict(self) -> dict[str, torch.Tensor]:
        options = StateDictOptions(full_state_dict=True, cpu_offload=True)
        state = get_model_state_dict(self.module, options=options)
        return state if self.settings.ctx.is_main else {}

    def load_full_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        set_model_state_dict(self.module, state, options=StateDictOptions(full_state_dict=True, strict=False))

    def optimizer_state(self) -> dict[str, Any]:
        assert self.optimizer is not None
        return get_optimizer_state_dict(self.module, self.optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))

    def load_optimizer_state(self, state: dict[str, Any]) -> None:
        assert self.optimizer is not None
        set_optimizer_state_dict(self.module, self.optimizer, optim_state_dict=state, options=StateDictOptions(full_state_dict=True))

    def part_tensors(self, part: str) -> list[torch.Tensor]:
        tensors = super().part_tensors(part)
        return [t.to_local() if isinstance(t, DTensor) else t for t in tensors]

    def move_part(self, part: str, device: torch.device, pin: bool) -> int:
        if part == "params":
            # Sharded parameters are DTensors owned by FSDP2: move through Module.to, which FSDP2
            # supports (it re-registers its sharded parameters); the shard's bytes are what moved.
            moved = self.part_bytes("params")
            self.module.to(device)
            return moved
        return super().move_part(part, device, pin)
