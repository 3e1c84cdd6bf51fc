"""The train-backend seam: what the training loop asks of the thing that updates an actor's weights.

One class per backend (`torch.py`, `fsdp2.py`, `deepspeed.py`); the loop never branches on which. A
backend owns the actor's module (possibly wrapped or sharded), its optimizer, and how gradients
accumulate over micro-batches, are summed over ranks, clipped and applied. It also knows which of its
tensors live on the training device, so the residency manager (residency.py) can move them to host
memory between phases and back, and it can hand out full parameters one at a time (checkpoints,
weight sync to a rollout engine) whether or not they are sharded.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch

from ...launch.distributed import RankContext
from ...spec.runspec_types import ActorTraining, to_dict

PARTS = ("params", "optimizer")


@dataclass
class BackendSettings:
    """What a backend reads: the actor's typed `training` section (`config`), its device and rank context, and the
    trainer's micro-batch size. `training` may be given typed or as its JSON document (tests and benches pass a
    partial one; the schema's defaults fill the rest); `training` keeps the document for the readers of a dict
    (the backends read `config`; the DeepSpeed config too)."""

    actor: str
    training: Mapping[str, Any] | ActorTraining
    device: torch.device
    ctx: RankContext
    micro_batch_size: int | None = None
    config: ActorTraining = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.training, ActorTraining):
            self.config, self.training = self.training, to_dict(self.training)
        else:
            self.config = ActorTraining.from_dict(self.training)

    @property
    def bf16(self) -> bool:
        return self.config.precision == "bf16"


def make_optimizer(params: list[torch.nn.Parameter], training: ActorTraining, fused_ok: bool = True) -> torch.optim.Optimizer:
    if training.optimizer == "sgd":
        return torch.optim.SGD(params, lr=training.learning_rate, weight_decay=training.weight_decay)
    beta1, beta2 = training.betas
    # The fused kernel does the whole update in one pass per tensor instead of a Python loop of
    # foreach ops: measured 2.6x faster optimizer steps on CPU (bench/runtime/trl_compare.py), and
    # it is TRL's default too. It needs plain floating tensors on CPU or CUDA (not DTensors).
    fused = fused_ok and all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params)
    return torch.optim.AdamW(params, lr=training.learning_rate, betas=(beta1, beta2), weight_decay=training.weight_decay, fused=fused)


def tensor_bytes(tensors: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


class TrainBackend(ABC):
    """One trainable actor's update machinery. The loop calls, per optimizer step:
    `zero_grad`, then for each micro-batch `with accumulate(last): backward(loss)`, then `clip`, `step`."""

    name: str = "?"
    # Whether each rank holds only a slice of every parameter (a copy of the module is not the model): who copies
    # the weights (the async producers, rollout/full_weights.py) gathers them through `full_parameters`.
    shards: bool = False

    def __init__(self, model: torch.nn.Module, settings: BackendSettings):
        self.settings = settings
        self.module: torch.nn.Module = model
        self.optimizer: torch.optim.Optimizer | None = None

    # ------------------------------------------------------------------ the update
    def forward_context(self) -> contextlib.AbstractContextManager[Any]:
        """Around every forward of this actor (sampling and update): bf16 autocast where asked."""
        if self.settings.bf16 and self.uses_autocast:
            return torch.autocast(device_type=self.settings.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    uses_autocast = True  # fsdp2 casts parameters itself (MixedPrecisionPolicy)

    def sampling(self) -> contextlib.AbstractContextManager[Any]:
        """Around a rollout: a sharded backend gathers its parameters once here instead of once per forward."""
        return contextlib.nullcontext()

    def loss_scale(self) -> float:
        """Factor the loop multiplies each (globally normalised) micro-batch loss by before `backward`.
        1 where gradients are summed over ranks; the world size where the engine averages them."""
        return 1.0

    def accumulate(self, last: bool) -> contextlib.AbstractContextManager[Any]:
        """Around one micro-batch's backward; `last` is the optimizer step's final micro-batch."""
        return contextlib.nullcontext()

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def zero_grad(self) -> None:
        assert self.optimizer is not None
        self.optimizer.zero_grad(set_to_none=True)

    @abstractmethod
    def clip(self, max_norm: float) -> float:
        """Sum gradients over ranks where the backend has not, clip them to `max_norm`; the norm before clipping."""

    def step(self) -> None:
        assert self.optimizer is not None
        self.optimizer.step()

    def set_lr(self, lr: float) -> None:
        assert self.optimizer is not None
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    # ------------------------------------------------------------------ state
    @abstractmethod
    def full_parameters(self) -> Iterator[tuple[str, torch.Tensor]]:
        """(name, full tensor) one parameter at a time, on every rank (a sharded backend gathers each)."""

    @abstractmethod
    def full_state_dict(self) -> dict[str, torch.Tensor]:
        """The whole model's state for a Hugging Face checkpoint: full tensors on rank 0 (CPU), {} elsewhere."""

    @abstractmethod
    def load_full_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Loads full weights read from a checkpoint (every rank passes the same dict)."""

    @abstractmethod
    def optimizer_state(self) -> dict[str, Any]:
        """The optimizer's state for `optimizer.pt` (rank 0's is written)."""

    @abstractmethod
    def load_optimizer_state(self, state: dict[str, Any]) -> None: ...

    # ------------------------------------------------------------------ residency
    def part_tensors(self, part: str) -> list[torch.Tensor]:
        """The tensors of `params` or `optimizer` state that residency moves (this rank's shards)."""
        if part == "params":
            return [p for p in self.module.parameters()]
        assert self.optimizer is not None
        return [v for state in self.optimizer.state.values() for v in state.values() if isinstance(v, torch.Tensor) and v.dim() > 0]

    def part_bytes(self, part: str) -> int:
        return tensor_bytes(self.part_tensors(part))

    def move_part(self, part: str, device: torch.device, pin: bool) -> int:
        """Moves `part` to `device` in place (parameter identity kept, so the optimizer stays keyed);
        returns the bytes moved. The old storages are released."""
        moved = 0
        if part == "params":
            for p in self.module.parameters():
                moved += _move_param(p, device, pin)
            return moved
        assert self.optimizer is not None
        for state in self.optimizer.state.values():
            for key, value in list(state.items()):
                if isinstance(value, torch.Tensor) and value.dim() > 0:
                    state[key] = _copy_to(value, device, pin)
                    moved += value.numel() * value.element_size()
        return moved

    def grads_bytes(self) -> int:
        return tensor_bytes(p.grad for p in self.module.parameters() if p.grad is not None)


def _copy_to(t: torch.Tensor, device: torch.device, pin: bool) -> torch.Tensor:
    from torch.distributed.tensor import DTensor

    if isinstance(t, DTensor):  # a shard (FSDP2 optimizer state): move the local part, keep the layout
        return DTensor.from_local(_copy_to(t.to_local(), device, pin), t.device_mesh, t.placements, run_check=False)
    # Always a new storage, even CPU -> CPU: the old one is freed, which is what an offload must prove
    # (and on CPU-only hosts the bookkeeping is the same as on a GPU host).
    if device.type == "cpu":
        out = torch.empty(t.shape, dtype=t.dtype, device="cpu", pin_memory=pin and torch.cuda.is_available())
        out.copy_(t, non_blocking=pin)
        return out
    return t.to(device, non_blocking=True, copy=True)


def _move_param(p: torch.nn.Parameter, device: torch.device, pin: bool) -> int:
    p.data = _copy_to(p.data, device, pin)
    if p.grad is not None:
        p.grad = _copy_to(p.grad, device, pin)
    return p.numel() * p.element_size()
