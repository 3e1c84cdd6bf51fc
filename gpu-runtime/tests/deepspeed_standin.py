"""STAND-IN for a DeepSpeed ZeRO-3 engine: DeepSpeed is not installed on any machine of this workplace.

This is not DeepSpeed. It wraps a real torch model and a torch AdamW and implements exactly the
engine, ZeRO-optimizer and `deepspeed.zero` calls that troupe/backends/deepspeed.py makes, with
DeepSpeed's parameter names (from DeepSpeed 0.19.6's runtime/engine.py, runtime/zero/stage3.py,
runtime/zero/partition_parameters.py and runtime/zero/offload_config.py), and it enforces the
contract those calls have in DeepSpeed, so that a backend that misuses them fails here:

- training forwards run through the engine (its forward registers the backward prologue);
- `backward` divides by `gradient_accumulation_steps` unless `scale_wrt_gas=False`;
- `step` needs the accumulation boundary set and clips at the config's `gradient_clipping` inside
  the step (the formula of stage3 `unscale_and_clip_grads`, the same as torch's clip_grad_norm_);
- gradients are AVERAGED over data-parallel ranks (ZeRO-3's reduce-scatter averages);
- the ZeRO optimizer keeps fp32 master weights of its own: parameters changed behind its back come
  back at the next step unless `refresh_fp32_params()` is called;
- `GatheredParameters` keeps changes made inside it only with `modifier_rank` set;
- `offload_states` refuses offloaded parameters and a CPU optimizer as DeepSpeed does, and anything
  that needs an offloaded state (forward, backward, step, gather, state dicts) before
  `reload_states()` raises;
- every call is recorded, in order, in `engine.calls`.

One process holds the whole model: "partitions" are the full tensors (ds_tensor is the parameter),
and with several ranks each rank holds a full replica whose gradients are averaged. That is enough for
the backend's contract, not for DeepSpeed's memory behaviour, which only real DeepSpeed shows.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Container

import torch
import torch.distributed as dist


class StandInOffloadDeviceEnum(str, Enum):
    """Stand-in for deepspeed.runtime.zero.offload_config.OffloadDeviceEnum."""

    none = "none"
    cpu = "cpu"
    nvme = "nvme"


class StandInOffloadStateTypeEnum(str, Enum):
    """Stand-in for deepspeed.runtime.zero.offload_config.OffloadStateTypeEnum."""

    optim_states = "optim_states"
    hp_params = "hp_params"
    lp_params = "lp_params"
    lp_grads = "lp_grads"
    contiguous_grad_buffer = "contiguous_grad_buffer"


def _world() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _fresh_copy(t: torch.Tensor, device: torch.device | str, pin: bool) -> torch.Tensor:
    out = torch.empty(t.shape, dtype=t.dtype, device=device, pin_memory=pin and torch.cuda.is_available())
    out.copy_(t)
    return out


class StandInZeroOptimizer:
    """Stand-in for DeepSpeedZeroOptimizer_Stage3: fp32 master weights, an inner AdamW, clipping."""

    def __init__(self, engine: "StandInDeepSpeedEngine", params: list[torch.nn.Parameter], config: dict[str, Any]):
        if config["optimizer"]["type"].lower() != "adamw":
            raise ValueError(f"stand-in: optimizer {config['optimizer']['type']!r} not modelled")
        o = config["optimizer"]["params"]
        self.engine = engine
        self.params = params
        self.clip_grad = float(config.get("gradient_clipping", 0.0))
        self.cpu_optimizer = config["zero_optimization"].get("offload_optimizer", {}).get("device", "none") != "none"
        # hp params: the fp32 masters the inner optimizer steps (one "flat group" per parameter here).
        self.fp32_partitioned_groups_flat = [p.detach().float().clone().requires_grad_(True) for p in params]
        self.optimizer = torch.optim.AdamW(
            self.fp32_partitioned_groups_flat, lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"], weight_decay=o["weight_decay"],
            fused=all(m.device.type in ("cpu", "cuda") for m in self.fp32_partitioned_groups_flat),
        )
        self._global_grad_norm: torch.Tensor | None = None
        # stage3's set of OffloadStateTypeEnum members that offload_states filled and reload_states walks
        self.offloaded_states: set[StandInOffloadStateTypeEnum] = set()

    # promoted like stage3's: `param_groups` and `state` are the inner optimizer's
    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return self.optimizer.param_groups

    @property
    def state(self) -> Any:
        return self.optimizer.state

    def step(self) -> bool:
        """Returns whether the step was applied (False on non-finite gradients, as DeepSpeed skips)."""
        _, world = _world()
        grads = []
        for p, master in zip(self.params, self.fp32_partitioned_groups_flat):
            g = p.grad.detach().float() if p.grad is not None else torch.zeros_like(master)
            if world > 1:
                g = g.clone()
                dist.all_reduce(g, op=dist.ReduceOp.SUM)
                g /= world  # ZeRO-3 averages over data-parallel ranks
            grads.append(g)
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        if not torch.isfinite(norm):
            return False
        self._global_grad_norm = norm
        if self.clip_grad > 0.0:
            clip = torch.clamp((norm + 1e-6) / self.clip_grad, min=1.0)  # stage3 unscale_and_clip_grads
            grads = [g / clip for g in grads]
        for master, g in zip(self.fp32_partitioned_groups_flat, grads):
            master.grad = g
        self.optimizer.step()
        with torch.no_grad():
            for p, master in zip(self.params, self.fp32_partitioned_groups_flat):
                p.copy_(master.to(p.dtype))  # bit16 partitions refreshed from the fp32 masters
                master.grad = None
        return True

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    def refresh_fp32_params(self) -> None:
        self.engine._record("refresh_fp32_params")
        self.engine._need(("lp_params", "hp_params"), "refresh_fp32_params")
        with torch.no_grad():
            for p, master in zip(self.params, self.fp32_partitioned_groups_flat):
                master.copy_(p.float())

    def state_dict(self) -> dict[str, Any]:
        self.engine._record("optimizer.state_dict")
        self.engine._need(("hp_params", "optim_states"), "optimizer state_dict")
        return {
            "zero_stage": 3,
            "partition_count": _world()[1],
            "optimizer_state_dict": self.optimizer.state_dict(),
            "fp32_flat_groups": [m.detach().clone() for m in self.fp32_partitioned_groups_flat],
        }

    def load_state_dict(self, state_dict_list, load_optimizer_states=True, load_from_fp32_weights=False,
                        checkpoint_folder=None, load_serial=None, param_shapes=None) -> None:
        self.engine._record("optimizer.load_state_dict", shards=len(state_dict_list))
        self.engine._need(("lp_params", "hp_params", "optim_states"), "optimizer load_state_dict")
        rank, _ = _world()
        mine = state_dict_list[rank]  # as stage3 `_rigid_load_state_dict` picks its own partition
        if load_optimizer_states:
            self.optimizer.load_state_dict(mine["optimizer_state_dict"])
        with torch.no_grad():
            for master, saved, p in zip(self.fp32_partitioned_groups_flat, mine["fp32_flat_groups"], self.params):
                master.copy_(saved)
                p.copy_(master.to(p.dtype))


class StandInDeepSpeedEngine(torch.nn.Module):
    """Stand-in for deepspeed.DeepSpeedEngine (ZeRO stage 3), see the module docstring."""

    def __init__(self, model: torch.nn.Module, config: dict[str, Any], device: torch.device | str = "cpu"):
        super().__init__()
        zero = config["zero_optimization"]
        if zero.get("stage") != 3:
            raise ValueError("stand-in: only ZeRO stage 3 is modelled")
        self.config = config
        self.device = torch.device(device)
        if config.get("bf16", {}).get("enabled"):
            model.to(torch.bfloat16)  # DeepSpeed holds bf16 parameters; the masters stay fp32
        self.module = model.to(self.device)
        self.params = [p for p in model.parameters() if p.requires_grad]
        for p in model.parameters():
            p.ds_tensor = p.data  # this rank's partition (one process: the whole tensor)
            p._standin_engine = self
        self.optimizer = StandInZeroOptimizer(self, self.params, config)
        self.param_offloaded = zero.get("offload_param", {}).get("device", "none") != "none"
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._boundary: bool | None = None
        self._forwards_pending = 0
        self._step_applied = False
        self._global_grad_norm: torch.Tensor | None = None

    def __getattr__(self, name: str) -> Any:
        # Like DeepSpeedEngine.__getattr__: attributes the engine lacks are the model's.
        try:
            return super().__getattr__(name)
        except AttributeError:
            module = self.__dict__["_modules"].get("module")
            if module is None:
                raise
            return getattr(module, name)

    # ------------------------------------------------------------------ bookkeeping
    def _record(self, name: str, **detail: Any) -> None:
        self.calls.append((name, detail))

    @property
    def offloaded_states(self) -> set[StandInOffloadStateTypeEnum]:
        return self.optimizer.offloaded_states

    def _need(self, states: tuple[str, ...], what: str) -> None:
        away = sorted(s.value for s in self.offloaded_states if s.value in states)
        if away:
            raise RuntimeError(f"stand-in: {what} while {away} are offloaded (call reload_states first)")

    def call_names(self) -> list[str]:
        return [name for name, _ in self.calls]

    # ------------------------------------------------------------------ training
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        self._need(("lp_params",), "forward")
        if torch.is_grad_enabled():
            self._forwards_pending += 1
        self._record("forward")
        return self.module(*inputs, **kwargs)

    def zero_grad(self) -> None:
        self._record("zero_grad")
        for p in self.module.parameters():
            p.grad = None

    def set_gradient_accumulation_boundary(self, is_boundary) -> None:
        self._record("set_gradient_accumulation_boundary", is_boundary=is_boundary)
        self._boundary = bool(is_boundary)

    def backward(self, loss, retain_graph=False, scale_wrt_gas=True):
        self._record("backward", scale_wrt_gas=scale_wrt_gas, boundary=self._boundary)
        self._need(("lp_params", "lp_grads"), "backward")
        if self._forwards_pending == 0:
            raise RuntimeError("stand-in: backward of a loss whose forward did not run through the engine")
        if self._boundary is None:
            raise RuntimeError("stand-in: set_gradient_accumulation_boundary was never called")
        if loss.dim() != 0:
            raise RuntimeError("stand-in: loss must be a scalar tensor")
        self._forwards_pending = 0
        scaled = loss / self.config["gradient_accumulation_steps"] if scale_wrt_gas else loss
        scaled.backward(retain_graph=retain_graph)
        return scaled

    def step(self, lr_kwargs=None) -> None:
        self._record("step", boundary=self._boundary)
        if not self._boundary:
            raise RuntimeError("stand-in: step() off a gradient accumulation boundary (this backend steps once per boundary)")
        self._need(("lp_params", "hp_params", "optim_states", "lp_grads"), "step")
        self._step_applied = self.optimizer.step()
        if self._step_applied:
            self._global_grad_norm = self.optimizer._global_grad_norm
        self.optimizer.zero_grad()

    def was_step_applied(self) -> bool:
        return self._step_applied

    def get_global_grad_norm(self) -> float:
        return self._global_grad_norm  # None before the first step, as in DeepSpeed

    # ------------------------------------------------------------------ state
    def _zero3_consolidated_16bit_state_dict(self, exclude_frozen_parameters=False):
        self._record("_zero3_consolidated_16bit_state_dict")
        self._need(("lp_params",), "consolidated state dict")
        rank, _ = _world()
        if rank != 0:
            return None
        return {k: v.detach().cpu().clone() for k, v in self.module.state_dict().items()}

    # ------------------------------------------------------------------ residency
    def offload_states(self, include: Container[Any] = None, device=StandInOffloadDeviceEnum.cpu, pin_memory: bool = True,
                       non_blocking: bool = False) -> None:
        states = {StandInOffloadStateTypeEnum(s) for s in include} if include is not None else set(StandInOffloadStateTypeEnum)
        names = sorted(s.value for s in states)
        self._record("offload_states", include=names, device=StandInOffloadDeviceEnum(device).value, pin_memory=pin_memory)
        if self.param_offloaded:
            raise AssertionError("Moving states across devices is not supported for offloaded parameters.")
        if self.optimizer.cpu_optimizer and ({"optim_states", "hp_params"} & set(names)):
            raise AssertionError("Offloading is supported only for DeepSpeed FusedAdam.")  # DeepSpeed issue 6596
        if StandInOffloadDeviceEnum(device) != StandInOffloadDeviceEnum.cpu:
            raise ValueError("stand-in: only the CPU is an offload target")
        self._move(sorted(s.value for s in states - self.offloaded_states), torch.device("cpu"), pin_memory)
        self.offloaded_states.update(states)

    def reload_states(self, non_blocking: bool = False) -> None:
        self._record("reload_states", reloaded=sorted(s.value for s in self.offloaded_states))
        self._move(sorted(s.value for s in self.offloaded_states), self.device, False)
        self.offloaded_states.clear()

    def _move(self, names: list[str], device: torch.device, pin: bool) -> None:
        """New storages every time (CPU -> CPU too), so a test can see that the old ones were released."""
        for name in names:
            if name == "lp_params":
                for p in self.module.parameters():
                    p.data = _fresh_copy(p.data, device, pin)
                    p.ds_tensor = p.data
            elif name == "hp_params":
                for m in self.optimizer.fp32_partitioned_groups_flat:
                    m.data = _fresh_copy(m.data, device, pin)
            elif name == "optim_states":
                for s in self.optimizer.state.values():
                    for k, v in list(s.items()):
                        if isinstance(v, torch.Tensor) and v.dim() > 0:
                            s[k] = _fresh_copy(v, device, pin)
            # lp_grads, contiguous_grad_buffer: empty between steps here (gradients are None after step)


class StandInGatheredParameters:
    """Stand-in for deepspeed.zero.GatheredParameters: records the gather; without `modifier_rank`
    changes made inside are dropped on exit (DeepSpeed re-partitions from the untouched shard)."""

    def __init__(self, params, modifier_rank=None, fwd_module=None, enabled=True):
        self.params = list(params)
        self.modifier_rank = modifier_rank
        self.enabled = enabled
        self.engine: StandInDeepSpeedEngine | None = getattr(self.params[0], "_standin_engine", None) if self.params else None
        self._saved: list[torch.Tensor] = []

    def __enter__(self) -> None:
        if self.engine is not None:
            names = [n for n, p in self.engine.module.named_parameters() if any(p is q for q in self.params)]
            self.engine._record("gather", params=names, modifier_rank=self.modifier_rank)
            self.engine._need(("lp_params",), "GatheredParameters")
        if self.modifier_rank is None:
            self._saved = [p.detach().clone() for p in self.params]

    def __exit__(self, *exc: Any) -> None:
        if self.modifier_rank is None:
            with torch.no_grad():
                for p, saved in zip(self.params, self._saved):
                    p.copy_(saved)
        if self.engine is not None:
            self.engine._record("release", count=len(self.params))


def standin_engine_factory(actor: str, model: torch.nn.Module, config: dict[str, Any], settings: Any) -> Any:
    """An EngineFactory (troupe.backends.deepspeed) building the stand-in instead of DeepSpeed."""
    from troupe.engines.train.deepspeed import DeepSpeedRuntime

    engine = StandInDeepSpeedEngine(model, config, settings.device)
    return DeepSpeedRuntime(engine, StandInGatheredParameters, StandInOffloadDeviceEnum.cpu, StandInOffloadStateTypeEnum)


__all__ = [
    "StandInDeepSpeedEngine",
    "StandInGatheredParameters",
    "StandInOffloadDeviceEnum",
    "StandInOffloadStateTypeEnum",
    "StandInZeroOptimizer",
    "standin_engine_factory",
]
