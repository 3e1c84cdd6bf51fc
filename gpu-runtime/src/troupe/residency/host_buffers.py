"""Host buffers for offload: allocated once, before the first step, and reused by every move.

Why: on the first H200 run the first offload of two actors' training state moved 0.74 GB/s (14.7
GiB in 21.4 s) against a 55 GB/s pinned copy: every offload allocated fresh pinned host tensors,
and pinning fresh pages runs at well under 1 GB/s; later offloads reused the caching host
allocator's blocks (40 GB/s). Here each model's parameters get one host slab, made when the run
is set up (`ResidencyManager.prepare_host_buffers`), and its optimizer state one slab sized for
Adam's two moments; each tensor gets a fixed view of its slab (an `Arena` hands them out in order
and remembers them), so every offload is a copy into memory that is already pinned, and the
storage an offloaded tensor lives in is the same one every time (tested by storage identity).

Reload copies the host view to a new device tensor and leaves the view in the pool for the next
offload. On CUDA hosts the slabs are pinned (`pin_memory=True`) and the copies asynchronous (the
manager synchronises after each move); on CPU-only hosts nothing is pinned and the manager only
uses a pool when handed one (tests), since "host" and "device" are the same memory there.
A tensor the slab has no room for (another optimizer's state, a gradient) gets its own buffer on
first use, kept and reused the same way; `late_bytes` counts them.
"""

from __future__ import annotations

from typing import Iterable

import torch

_ALIGN = 256  # bytes: every view starts aligned for any dtype and for DMA


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class Arena:
    """One host slab; `view(i, like)` is slot i's fixed view shaped and typed like `like`."""

    def __init__(self, size: int, pin: bool):
        self.slab = torch.empty(_aligned(size), dtype=torch.uint8, pin_memory=pin)
        self.used = 0
        self.pin = pin
        self.slots: dict[int, torch.Tensor] = {}
        self.late_bytes = 0

    def view(self, i: int, like: torch.Tensor) -> torch.Tensor:
        slot = self.slots.get(i)
        if slot is not None and slot.shape == like.shape and slot.dtype == like.dtype:
            return slot
        n = nbytes(like)
        if self.used + n <= self.slab.numel():
            slot = self.slab[self.used : self.used + n].view(like.dtype).view(like.shape)
            self.used += _aligned(n)
        else:
            slot = torch.empty(like.shape, dtype=like.dtype, pin_memory=self.pin)
            self.late_bytes += n
        self.slots[i] = slot
        return slot


class HostBuffers:
    """Arenas per (model, part): `params`, `grads`, `optimizer`."""

    def __init__(self, pin: bool):
        self.pin = pin and torch.cuda.is_available()
        self.arenas: dict[tuple[str, str], Arena] = {}

    def reserve(self, model: str, part: str, size: int) -> Arena:
        arena = self.arenas.get((model, part))
        if arena is None:
            arena = Arena(size, self.pin)
            self.arenas[(model, part)] = arena
        return arena

    def arena(self, model: str, part: str) -> Arena:
        return self.arenas.get((model, part)) or self.reserve(model, part, 0)

    def offload(self, model: str, part: str, i: int, t: torch.Tensor) -> torch.Tensor:
        """`t`'s values in slot i of (model, part): the same host storage every time."""
        slot = self.arena(model, part).view(i, t)
        slot.copy_(t, non_blocking=self.pin and t.is_cuda)
        return slot

    @property
    def reserved_bytes(self) -> int:
        return sum(a.slab.numel() for a in self.arenas.values())

    @property
    def late_bytes(self) -> int:
        return sum(a.late_bytes for a in self.arenas.values())


def reload(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A new device tensor with the host view's values (the view stays in the pool)."""
    return t.to(device, non_blocking=True, copy=True)


def move_params(pool: HostBuffers, model: str, params: Iterable[torch.nn.Parameter], device: torch.device, to_host: bool) -> int:
    """Parameters (and their gradients) to the host (`to_host`: into the pool) or to `device`, in place
    (parameter identity kept, so the optimizer stays keyed); returns bytes moved."""
    moved = 0
    for i, p in enumerate(params):
        p.data = pool.offload(model, "params", i, p.data) if to_host else reload(p.data, device)
        moved += nbytes(p)
        if p.grad is not None:
            p.grad = pool.offload(model, "grads", i, p.grad) if to_host else reload(p.grad, device)
            moved += nbytes(p.grad)  # the bytes that crossed the link, so the event's GB/s is the copy's
    return moved


def move_optimizer(pool: HostBuffers, model: str, optimizer: torch.optim.Optimizer, device: torch.device, to_host: bool) -> int:
    """Every optimizer state tensor (dim > 0) into the pool (`to_host`) or to `device`; returns bytes moved."""
    moved = 0
    i = 0
    for state in optimizer.state.values():
        for key, value in list(state.items()):
            if isinstance(value, torch.Tensor) and value.dim() > 0:
                state[key] = pool.offload(model, "optimizer", i, value) if to_host else reload(value, device)
                moved += nbytes(value)
                i += 1
    return moved


def optimizer_reserve_bytes(optimizer: torch.optim.Optimizer | None, params: Iterable[torch.nn.Parameter]) -> int:
    """Host bytes to set aside for an optimizer's state before its first step: Adam's two float32
    moments per trainable parameter (AdamW, Adam); 0 for others (their state is pooled on first offload)."""
    if optimizer is None or type(optimizer).__name__ not in ("AdamW", "Adam"):
        return 0
    return sum(2 * _aligned(p.numel() * 4) for p in params if p.requires_grad)
