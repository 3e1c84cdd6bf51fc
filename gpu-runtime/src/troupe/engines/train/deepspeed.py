"""`training.backend: "deepspeed"`: DeepSpeed ZeRO-3 through Accelerate, one DeepSpeed plugin per actor.

The loop's contract (base.py) mapped onto a DeepSpeed engine:
- `zero_grad()` -> `engine.zero_grad()`.
- `accumulate(last)` -> `engine.set_gradient_accumulation_boundary(last)` before the micro-batch's
  forward: only the last micro-batch is a boundary, so the engine steps once per optimizer step
  however many micro-batches there are (DeepSpeed's documented "manual boundary" pattern).
- `backward(loss)` -> `engine.backward(loss, scale_wrt_gas=False)`: the loop already normalises each
  micro-batch's loss over the whole batch, so DeepSpeed must not divide by its accumulation count.
- `loss_scale()` is the world size: ZeRO-3 AVERAGES gradients over data-parallel ranks
  (stage3.py, `__avg_scatter_grads`), the loop's losses are normalised to be SUMMED over ranks.
- `clip(max_norm)` -> `engine.step()`, then `engine.get_global_grad_norm()`. DeepSpeed clips inside
  its step at the config's `gradient_clipping`, and the norm (before clipping, computed in the ZeRO
  optimizer's step) exists only after that step, so `clip` takes the step and `step()` only checks
  that it did. `max_norm` must equal the config's `gradient_clipping` (the same spec field feeds both).
  The norm is None (refused here) before the first step, and stale after a step DeepSpeed skipped for
  non-finite gradients (`was_step_applied()` false): reported as NaN then.
- Training forwards must run through the engine (`self.module` IS the engine): since DeepSpeed 0.19
  its forward registers the hooks that run the backward prologue, and the ZeRO-3 optimizer counts
  micro-steps there. The engine forwards the attributes it lacks (`generate`, `save_pretrained`…) to
  the model, but not `config`, which on a DeepSpeed engine is DeepSpeed's: read `backend.model.config`.

Residency: `move_part` maps to `engine.offload_states(include=..., device=cpu, pin_memory=...)` and
`engine.reload_states()`. `reload_states` brings back EVERY offloaded state; to reload one part while
the other stays on the host (rollout: parameters back, optimizer state still away) the other part's
states are held out of the ZeRO optimizer's `offloaded_states` set for that call (see `_reload`).
DeepSpeed refuses `offload_states` when `offload_param` is on ("not supported for offloaded
parameters") and cannot offload a CPU optimizer's model (DeepSpeed issue 6596, refused in the
contracts): a part DeepSpeed already keeps on the host is not on the device (0 bytes, no move), and
moving the other part in those set-ups raises.

The engine comes from an injectable factory (`DeepSpeedBackend(..., engine_factory=)` or the
module-level `engine_factory`), so tests run the backend against a stand-in engine
(tests/deepspeed_standin.py); the default builds it with Accelerate and imports DeepSpeed lazily.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import socket
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Iterator

import torch
import torch.distributed as dist

from .base import BackendSettings, TrainBackend, tensor_bytes
from .deepspeed_config import DEEPSPEED_PIP, deepspeed_config

# The DeepSpeed states (OffloadStateTypeEnum names) that make up each residency part. Gradient
# partitions and the reduce bucket travel with the optimizer: they are training state, not weights.
PART_STATES: dict[str, tuple[str, ...]] = {
    "params": ("lp_params",),
    "optimizer": ("hp_params", "optim_states", "lp_grads", "contiguous_grad_buffer"),
}


class DeepSpeedUnavailable(RuntimeError):
    """DeepSpeed (or Accelerate) cannot be imported here."""


@functools.lru_cache(maxsize=1)
def deepspeed_available() -> bool:
    """Whether `import deepspeed` works here (the support rules refuse `backend: "deepspeed"` otherwise)."""
    try:
        import deepspeed  # noqa: F401
    except Exception:  # ImportError, or a broken install failing at import (missing CUDA toolkit…)
        return False
    return True


@dataclass
class DeepSpeedRuntime:
    """What the backend needs from DeepSpeed for one actor: its engine and the ZeRO API beside it."""

    engine: Any  # deepspeed.DeepSpeedEngine
    gathered_parameters: Callable[..., ContextManager[Any]]  # deepspeed.zero.GatheredParameters
    offload_device_cpu: Any  # deepspeed.runtime.zero.offload_config.OffloadDeviceEnum.cpu
    state_types: Any  # deepspeed.runtime.zero.offload_config.OffloadStateTypeEnum


# (actor name, model, DeepSpeed config, settings) -> the actor's runtime.
EngineFactory = Callable[[str, torch.nn.Module, dict[str, Any], BackendSettings], DeepSpeedRuntime]

# Tests set this (or pass `engine_factory=`) to run the backend on a stand-in; None: Accelerate.
engine_factory: EngineFactory | None = None


class DeepSpeedBackend(TrainBackend):
    name = "deepspeed"
    shards = True
    uses_autocast = False  # bf16 is DeepSpeed's: the engine holds bf16 parameters and computes in bf16

    def __init__(self, model: torch.nn.Module, settings: BackendSettings, engine_factory: EngineFactory | None = None):
        self.config = deepspeed_config(settings.config, settings.micro_batch_size, settings.ctx.world_size, settings.device)
        # The model is partitioned: only a module's own forward gathers its parameters, so the policy
        # must take the full forward (no direct read of the head's weight) and generation must keep
        # ranks' forward counts equal (policy.py and rollout.py read this flag).
        model._troupe_full_forward = True  # type: ignore[attr-defined]
        factory = engine_factory or globals()["engine_factory"] or accelerate_engine
        self.runtime = factory(settings.actor, model, copy.deepcopy(self.config), settings)
        self.engine = self.runtime.engine
        super().__init__(self.engine, settings)
        self.model: torch.nn.Module = self.engine.module  # the unwrapped Hugging Face model (names, checkpoints)
        # The ZeRO optimizer: `param_groups` is its inner optimizer's, so base.set_lr works unchanged.
        self.optimizer = self.engine.optimizer
        self.offloaded: set[str] = set()  # residency parts this backend has offloaded
        self._stepped = False

    # ------------------------------------------------------------------ the update
    def loss_scale(self) -> float:
        return float(self.settings.ctx.world_size)

    def zero_grad(self) -> None:
        self.engine.zero_grad()
        self._stepped = False

    def accumulate(self, last: bool) -> contextlib.AbstractContextManager[Any]:
        self._require_on_device(("params", "optimizer"), "a training micro-batch")
        self.engine.set_gradient_accumulation_boundary(last)
        return contextlib.nullcontext()

    def backward(self, loss: torch.Tensor) -> None:
        self.engine.backward(loss, scale_wrt_gas=False)

    def clip(self, max_norm: float) -> float:
        configured = self.config["gradient_clipping"]
        if float(max_norm) != configured:
            raise ValueError(
                f"training.maxGradNorm: the loop clips at {max_norm} but DeepSpeed was configured with "
                f"gradient_clipping {configured}; DeepSpeed clips inside its step at the configured value"
            )
        self.engine.step()
        self._stepped = True
        if not self.engine.was_step_applied():
            return float("nan")
        norm = self.engine.get_global_grad_norm()
        if norm is None:
            raise RuntimeError("DeepSpeed reported no gradient norm after its step")
        return float(norm)

    def step(self) -> None:
        if not self._stepped:
            raise RuntimeError("DeepSpeedBackend.step() without clip(): DeepSpeed clips and steps in one call (clip)")
        self._stepped = False

    # ------------------------------------------------------------------ state
    def full_parameters(self) -> Iterator[tuple[str, torch.Tensor]]:
        """One parameter at a time, gathered from its partitions on every rank. Each yielded tensor is
        a copy: the gathered storage is released when the next parameter is gathered."""
        self._require_on_device(("params",), "gathering full parameters")
        for name, p in self.model.named_parameters():
            with self.runtime.gathered_parameters([p]):
                full = p.detach().clone()
            yield name, full

    def full_state_dict(self) -> dict[str, torch.Tensor]:
        # What accelerator.get_state_dict(engine) calls for ZeRO-3 (with
        # stage3_gather_16bit_weights_on_model_save on): every rank takes part, one layer at a time,
        # rank 0 gets the full (bf16 or fp32) weights on the CPU, the others None.
        self._require_on_device(("params",), "saving full weights")
        state = self.engine._zero3_consolidated_16bit_state_dict()
        return dict(state) if self.settings.ctx.is_main and state is not None else {}

    def load_full_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self._require_on_device(("params", "optimizer"), "loading full weights")
        for name, p in self.model.named_parameters():
            if name not in state:
                continue  # strict=False, as the other backends load
            # Rank 0 writes the gathered parameter; leaving the context re-partitions rank 0's values.
            with self.runtime.gathered_parameters([p], modifier_rank=0):
                if self.settings.ctx.is_main:
                    with torch.no_grad():
                        p.copy_(state[name].to(device=p.device, dtype=p.dtype))
        # The ZeRO optimizer steps its own fp32 master partitions and copies them over the parameters:
        # without this, the next step would bring back the weights from before the load.
        self.engine.optimizer.refresh_fp32_params()

    def optimizer_state(self) -> dict[str, Any]:
        """Every rank's ZeRO-3 optimizer partition (fp32 master weights and Adam moments), gathered on
        rank 0 as DeepSpeed's `load_state_dict` wants them: a list indexed by data-parallel rank.
        Collective: every rank calls it. Rank 0 holds the whole optimizer state in host memory."""
        self._require_on_device(("optimizer",), "saving the optimizer state")
        shard = _to_cpu(self.engine.optimizer.state_dict())
        ctx = self.settings.ctx
        if not ctx.distributed:
            shards = [shard]
        else:
            gathered: list[Any] | None = [None] * ctx.world_size if ctx.is_main else None
            dist.gather_object(shard, gathered, dst=0)
            shards = gathered or []
        return {"deepspeed_zero3_shards": shards, "world_size": ctx.world_size} if ctx.is_main else {}

    def load_optimizer_state(self, state: dict[str, Any]) -> None:
        self._require_on_device(("params", "optimizer"), "loading the optimizer state")
        saved = state.get("world_size")
        if saved != self.settings.ctx.world_size:
            raise ValueError(
                f"the optimizer state was saved by {saved} DeepSpeed ranks and this run has {self.settings.ctx.world_size}: "
                "resume a ZeRO-3 checkpoint with the same world size"
            )
        # Each rank takes its own partition from the list (stage3 `_rigid_load_state_dict`), restores its
        # fp32 master partition and copies it over its parameter partition.
        self.engine.optimizer.load_state_dict(state["deepspeed_zero3_shards"], load_optimizer_states=True)

    # ------------------------------------------------------------------ residency
    def part_tensors(self, part: str) -> list[torch.Tensor]:
        """This rank's partitions of `part` that sit on the training device (a part DeepSpeed keeps
        on the host by `training.offload` has none)."""
        if self._kept_on_host(part):
            return []
        if part == "params":
            return [p.ds_tensor for p in self.model.parameters()]
        optimizer = self.engine.optimizer
        tensors: list[torch.Tensor] = list(getattr(optimizer, "fp32_partitioned_groups_flat", []))
        tensors += [v for s in optimizer.state.values() for v in s.values() if isinstance(v, torch.Tensor) and v.dim() > 0]
        grads = getattr(optimizer, "grad_partitions_flat_buffer", None)
        if isinstance(grads, torch.Tensor):
            tensors.append(grads)
        return tensors

    def part_bytes(self, part: str) -> int:
        return tensor_bytes(self.part_tensors(part))

    def grads_bytes(self) -> int:
        return 0  # ZeRO-3's gradient partitions are booked (and moved) with the optimizer part

    def move_part(self, part: str, device: torch.device, pin: bool) -> int:
        if self._kept_on_host(part):
            return 0
        self._refuse_state_moves(part)
        home = self.settings.device
        if part in self.offloaded and device == home:
            return self._reload(part)
        if part not in self.offloaded and device.type == "cpu":
            return self._offload([part], pin)
        return 0  # already where it was asked to be

    def _offload(self, parts: list[str], pin: bool) -> int:
        moved = sum(self.part_bytes(p) for p in parts)
        include = [getattr(self.runtime.state_types, s) for p in parts for s in PART_STATES[p]]
        self.engine.offload_states(include=include, device=self.runtime.offload_device_cpu, pin_memory=pin)
        self.offloaded.update(parts)
        return moved

    def _reload(self, part: str) -> int:
        """`reload_states()` brings back every state in the ZeRO-3 optimizer's `offloaded_states` set (the
        set `offload_states` fills and `reload_states` walks, the same attribute from DeepSpeed 0.16 to
        0.19.6). The states of a part that stays on the host are taken out of the set for the call and
        put back, so they stay where they are instead of making a round trip."""
        moved = self.part_bytes(part)
        staying = {getattr(self.runtime.state_types, s) for p in self.offloaded - {part} for s in PART_STATES[p]}
        pending: set[Any] = self.engine.optimizer.offloaded_states
        hidden = pending & staying
        pending -= hidden
        try:
            self.engine.reload_states()
        finally:
            pending |= hidden
        self.offloaded.discard(part)
        return moved

    def _kept_on_host(self, part: str) -> bool:
        offload = self.settings.config.offload
        return offload.params if part == "params" else offload.optimizer

    def _refuse_state_moves(self, part: str) -> None:
        offload = self.settings.config.offload
        if offload.params:
            raise RuntimeError(
                f"DeepSpeed cannot move {part} between phases while training.offload.params is on "
                "(engine.offload_states: not supported for offloaded parameters); turn off trainer.offloadBetweenPhases"
            )
        if offload.optimizer:
            raise RuntimeError(
                f"DeepSpeed cannot move {part} between phases while training.offload.optimizer is on "
                "(offload_states needs FusedAdam, DeepSpeed issue 6596); turn off trainer.offloadBetweenPhases"
            )

    def _require_on_device(self, parts: tuple[str, ...], what: str) -> None:
        away = [p for p in parts if p in self.offloaded]
        if away:
            raise RuntimeError(f"{what} needs {', '.join(away)} of {self.settings.actor!r} on the device: reload it first")


def _one_rank_environment() -> None:
    """A single process (no launcher) as rank 0 of 1. Without these variables deepspeed.comm's
    `init_distributed` goes looking for MPI (mpi4py), and Accelerate only starts DeepSpeed's
    communication when LOCAL_RANK is set. A launcher's own values are kept. Harmless where a one-rank
    process group exists already: DeepSpeed then wraps it (it still checks these variables first)."""
    if "LOCAL_RANK" in os.environ:
        return
    with socket.socket() as s:  # a free port for the one-rank rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for key, value in {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}.items():
        os.environ.setdefault(key, value)


def _to_cpu(obj: Any) -> Any:
    """Copies on the CPU of the tensors in nested dicts/lists: a shard pickled to rank 0 must not name a
    GPU, and a snapshot must not alias the live state the next step updates in place."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


# ---------------------------------------------------------------------- the default: Accelerate
_accelerator: Any = None


def accelerate_engine(actor: str, model: torch.nn.Module, config: dict[str, Any], settings: BackendSettings) -> DeepSpeedRuntime:
    """The actor's engine through Accelerate: its own DeepSpeedPlugin, selected, then `prepare`.

    Accelerate keeps ONE AcceleratorState per process, and the documented multi-model pattern gives
    the first Accelerator every plugin (`Accelerator(deepspeed_plugins={name: plugin, ...})`), then
    `accelerator.state.select_deepspeed_plugin(name)` before each model's `prepare`. Backends are built
    one actor at a time, so the first builds the Accelerator with its plugin and later ones register
    theirs in the same state's `deepspeed_plugins` mapping, as the Accelerator's constructor would have.
    """
    try:
        import deepspeed
        from accelerate import Accelerator
        from accelerate.utils import DeepSpeedPlugin
        from accelerate.utils.deepspeed import DummyOptim  # (accelerate.utils re-exports it only where DeepSpeed imports)
        from deepspeed.runtime.zero.offload_config import OffloadDeviceEnum, OffloadStateTypeEnum
    except ImportError as e:
        raise DeepSpeedUnavailable(
            f'training.backend "deepspeed" needs DeepSpeed and Accelerate ({DEEPSPEED_PIP}, or the gpu extra): {e}'
        ) from e
    global _accelerator
    if settings.device.type != "cuda":
        raise RuntimeError(f'training.backend "deepspeed" runs on CUDA devices only (Accelerate); this actor is on {settings.device}')
    plugin = DeepSpeedPlugin(hf_ds_config=config)
    if _accelerator is None:
        _one_rank_environment()
        # mixed_precision "no": each plugin's own `bf16` block decides (actors may differ).
        _accelerator = Accelerator(deepspeed_plugins={actor: plugin}, mixed_precision="no")
        if settings.device.index is not None and _accelerator.device != settings.device:
            raise RuntimeError(
                f"Accelerate put this rank's DeepSpeed engines on {_accelerator.device} (LOCAL_RANK) but the actor's "
                f"placement says {settings.device}: launch each rank with CUDA_VISIBLE_DEVICES set to its GPU"
            )
    else:
        plugins = _accelerator.state.deepspeed_plugins
        if actor in plugins:
            raise ValueError(f"a DeepSpeed engine for actor {actor!r} exists already in this process")
        plugin.set_mixed_precision("no")
        plugins[actor] = plugin
    _accelerator.state.select_deepspeed_plugin(actor)
    # The optimizer is the config's (FusedAdam, or DeepSpeedCPUAdam with offload_optimizer):
    # Accelerate wants a DummyOptim for it.
    training = settings.config
    params = [p for p in model.parameters() if p.requires_grad]
    dummy = DummyOptim(params, lr=training.learning_rate, weight_decay=training.weight_decay)
    engine, _ = _accelerator.prepare(model, dummy)
    # A selected stage-3 plugin leaves transformers' global "ZeRO-3 is on" switch set, which would make
    # every later from_pretrained (a frozen actor, a KL reference) build partitioned weights no engine owns.
    from transformers.integrations import unset_hf_deepspeed_config

    unset_hf_deepspeed_config()
    return DeepSpeedRuntime(engine, deepspeed.zero.GatheredParameters, OffloadDeviceEnum.cpu, OffloadStateTypeEnum)
