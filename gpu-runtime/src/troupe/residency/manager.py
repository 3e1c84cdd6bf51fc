"""Residency: which model's weights and optimizer state sit on the training device in each phase.

Two 7B actors do not fit on one GPU with their optimizer states, but each fits alone. So, when
`trainer.offloadBetweenPhases` is on (by default when two or more local models share a device):
- rollout: the parameters of every actor that samples are on the device; optimizer states wait on
  the host;
- an actor's update: that actor's parameters and optimizer state are on the device, every other
  model's parameters wait on the host;
and `training.offload.optimizer` keeps an actor's optimizer state on the host except around its
own step, `training.offload.params` its parameters except while it runs (both also without
between-phase offload). Every move is an `offload` event (actor, direction, bytes, seconds).

The manager also keeps the books: bytes it holds resident on the device per phase and their peak
(`resident_peak`). On a CPU-only host "host" and "device" are the same memory, so moving frees
nothing measurable, but the books are the same as on a GPU host: the benchmark reads them there,
and `scripts/gpu-check.sh` checks them against `torch.cuda.memory_allocated`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import torch

from ..engines.train.base import PARTS, TrainBackend, _move_param, tensor_bytes
from .host_buffers import HostBuffers
from .pool import pooled, pooled_move, prepare
from ..spec.runspec_types import Trainer

HOST = torch.device("cpu")


@dataclass
class Resident:
    """One model the manager places: a trainable actor's backend, or a frozen model (params only)."""

    name: str
    device: torch.device
    backend: TrainBackend | None = None
    module: torch.nn.Module | None = None  # a frozen model or a KL reference
    offload_params: bool = False  # training.offload.params
    offload_optimizer: bool = False  # training.offload.optimizer
    # LoRA actors on one shared base (shared_lora.py): moving one's parameters would move the others'
    # base too, so only their optimizer state moves.
    shared_params: bool = False
    where: dict[str, str] = field(default_factory=lambda: {"params": "device", "optimizer": "device"})
    host: HostBuffers | None = None  # set by ResidencyManager.prepare_host_buffers

    def parts(self) -> tuple[str, ...]:
        return PARTS if self.backend is not None else ("params",)

    def part_bytes(self, part: str) -> int:
        if self.backend is not None:
            return self.backend.part_bytes(part)
        assert self.module is not None
        return tensor_bytes(self.module.parameters()) if part == "params" else 0

    def move(self, part: str, target: torch.device, to_host: bool = False) -> int:
        pin = self.device.type == "cuda"
        if self.host is not None and pooled(self):  # host_buffers.py: the same pinned buffers every time
            return pooled_move(self, part, target, to_host)
        if self.backend is not None:
            return self.backend.move_part(part, target, pin)
        assert self.module is not None
        return sum(_move_param(p, target, pin) for p in self.module.parameters())


OffloadReporter = Callable[..., Any]


class ResidencyManager:
    def __init__(self, between_phases: bool, report: OffloadReporter | None = None):
        self.between_phases = between_phases
        self.report = report  # events.offload(step=, actor=, direction=, parts=, phase=, bytes=, seconds=)
        self.residents: dict[str, Resident] = {}
        self.step = 0
        self.resident_by_phase: dict[str, int] = {}
        self.resident_peak = 0
        self.moved_bytes = 0
        self.moved_seconds = 0.0

    def add(self, resident: Resident) -> None:
        self.residents[resident.name] = resident

    def prepare_host_buffers(self, pool: HostBuffers) -> int:
        """Host buffers for every state this manager may offload, allocated now (before the first
        step) and reused by every move (host_buffers.py); returns the bytes set aside."""
        return prepare(self, pool)

    # ------------------------------------------------------------------ phases
    def for_rollout(self, samplers: Iterable[str]) -> None:
        """Before sampling: the samplers' parameters on the device; optimizer states on the host."""
        wanted = {name: ("params",) for name in samplers}
        self._arrange(wanted, "rollout")

    def for_update(self, actor: str, also: Iterable[str] = ()) -> None:
        """Before `actor`'s update: its parameters and optimizer state on the device (and the
        parameters of `also`, e.g. its KL reference); every other model's parameters on the host."""
        wanted: dict[str, tuple[str, ...]] = {actor: PARTS}
        for name in also:
            wanted[name] = ("params",)
        self._arrange(wanted, "update")

    def observe(self, phase: str) -> None:
        """Books the bytes resident now (after an update, gradients included) under `phase`."""
        resident = self.resident_bytes()
        self.resident_by_phase[phase] = max(self.resident_by_phase.get(phase, 0), resident)
        self.resident_peak = max(self.resident_peak, resident)

    def for_everything(self, phase: str) -> None:
        """Everything on the device (checkpoint saving and eval read every model)."""
        self._arrange({name: r.parts() for name, r in self.residents.items()}, phase)

    def _arrange(self, wanted: dict[str, tuple[str, ...]], phase: str) -> None:
        offloads: list[tuple[Resident, str]] = []
        reloads: list[tuple[Resident, str]] = []
        for name, r in self.residents.items():
            for part in r.parts():
                need = part in wanted.get(name, ())
                if need and r.where[part] == "host":
                    reloads.append((r, part))
                elif not need and r.where[part] == "device" and self._may_offload(r, part):
                    offloads.append((r, part))
        # Offload first, so the device never holds both the leaving and the arriving states.
        self._move_all(offloads, "offload", phase)
        self._move_all(reloads, "reload", phase)
        self.observe(phase)

    def _may_offload(self, r: Resident, part: str) -> bool:
        if part == "params" and r.shared_params:
            return False
        if self.between_phases:
            return True
        return (part == "params" and r.offload_params) or (part == "optimizer" and r.offload_optimizer)

    def _move_all(self, moves: list[tuple[Resident, str]], direction: str, phase: str) -> None:
        by_resident: dict[str, list[str]] = {}
        for r, part in moves:
            by_resident.setdefault(r.name, []).append(part)
        for name, parts in by_resident.items():
            r = self.residents[name]
            target = HOST if direction == "offload" else r.device
            started = time.perf_counter()
            moved = sum(r.move(part, target, direction == "offload") for part in parts)
            if r.device.type == "cuda":
                torch.cuda.synchronize(r.device)  # pinned copies are asynchronous: the move is done when they are
            seconds = time.perf_counter() - started
            for part in parts:
                r.where[part] = "host" if direction == "offload" else "device"
            self.moved_bytes += moved
            self.moved_seconds += seconds
            if self.report is not None and moved > 0:  # an optimizer before its first step has no state to move
                self.report(step=self.step, actor=name, direction=direction, parts=parts, phase=phase, bytes=moved, seconds=seconds)

    # ------------------------------------------------------------------ books
    def resident_bytes(self) -> int:
        """Bytes of the managed states that are on their device now (gradients counted with params)."""
        total = 0
        for r in self.residents.values():
            for part in r.parts():
                if r.where[part] == "device":
                    total += r.part_bytes(part)
            if r.backend is not None and r.where["params"] == "device":
                total += r.backend.grads_bytes()
        return total


def offload_between_phases(trainer: Trainer, devices: dict[str, torch.device]) -> bool:
    """`trainer.offloadBetweenPhases`, or by default: on when two or more local models share a device."""
    if trainer.offload_between_phases is not None:
        return trainer.offload_between_phases
    seen: dict[str, int] = {}
    for device in devices.values():
        seen[str(device)] = seen.get(str(device), 0) + 1
    return any(count > 1 for device, count in seen.items() if not device.startswith("cpu"))
