"""Offload through host buffers allocated once before the first step (host_buffers.py), on CPU: no
pinning here, but the same slabs, the same views on every offload (storage identity), the old
storages freed, and training unchanged bit for bit."""

from __future__ import annotations

import pytest
import torch
from runtime_helpers import small_spec
from torch.multiprocessing.reductions import StorageWeakRef

from troupe.engines.train import BackendSettings, build_backend
from troupe.launch.distributed import SINGLE
from troupe.residency.host_buffers import HostBuffers, _aligned
from troupe.models.loading import build_tiny
from troupe.residency.manager import Resident, ResidencyManager

CPU = torch.device("cpu")
BATCH = torch.tensor([[1, 2, 3, 4, 5], [3, 4, 5, 6, 7]])


def _backend(seed: int = 0):
    torch.manual_seed(seed)
    loaded = build_tiny("tiny-char-2l")
    training = small_spec()["actors"][0]["training"] | {"backend": "torch", "precision": "fp32", "offload": {"params": False, "optimizer": False}}
    training.setdefault("optimizer", "adamw")
    training.update({"learningRate": 1e-2, "weightDecay": 0.0, "betas": [0.9, 0.999]})
    return loaded.model, build_backend(loaded.model, BackendSettings("a", training, CPU, SINGLE))


def _step(model, backend):
    model(BATCH, labels=BATCH).loss.backward()
    backend.step()
    backend.zero_grad()


def _host_ptrs(model, backend):
    params = [p.data.data_ptr() for p in model.parameters()]
    state = [v.data_ptr() for s in backend.optimizer.state.values() for v in s.values() if v.dim() > 0]
    return params, state


def _manager(backend, pool):
    manager = ResidencyManager(between_phases=True)
    manager.add(Resident("a", CPU, backend=backend))
    if pool is not None:
        manager.prepare_host_buffers(pool)
    return manager


def test_buffers_are_set_aside_before_the_first_step_and_every_offload_reuses_them():
    model, backend = _backend()
    pool = HostBuffers(pin=False)
    manager = _manager(backend, pool)
    params = list(model.parameters())
    # Before any step: the parameters' slab and one sized for AdamW's two float32 moments.
    param_bytes = sum(_aligned(p.numel() * p.element_size()) for p in params)
    assert pool.arenas[("a", "params")].slab.numel() == param_bytes
    assert pool.arenas[("a", "optimizer")].slab.numel() == 2 * sum(_aligned(p.numel() * 4) for p in params)
    assert not backend.optimizer.state  # nothing to move yet: the space is reserved all the same
    seen = None
    for cycle in range(3):
        _step(model, backend)
        refs = [StorageWeakRef(p.data.untyped_storage()) for p in params]
        manager.for_rollout([])  # nobody samples: everything to the host
        assert all(r.expired() for r in refs), "the device copies must be freed by an offload"
        ptrs = _host_ptrs(model, backend)
        for arena, got in ((pool.arenas[("a", "params")], ptrs[0]), (pool.arenas[("a", "optimizer")], ptrs[1])):
            lo = arena.slab.data_ptr()
            assert all(lo <= ptr < lo + arena.slab.numel() for ptr in got), "every host tensor is a view of its slab"
            assert all(arena.slab.untyped_storage().data_ptr() == lo for _ in got)
        if seen is not None:
            assert ptrs == seen, f"cycle {cycle}: an offload landed somewhere new"
        seen = ptrs
        manager.for_update("a")
        assert all(p.data.data_ptr() not in seen[0] for p in params)  # reloaded into fresh device tensors
    assert pool.late_bytes == 0  # AdamW's state fitted the reserved slab


def test_pooled_offload_trains_bitwise_like_no_offload():
    results = []
    for pool in (None, HostBuffers(pin=False)):
        model, backend = _backend(seed=3)
        manager = _manager(backend, pool) if pool is not None else None
        for _ in range(3):
            if manager is not None:
                manager.for_update("a")
            _step(model, backend)
            if manager is not None:
                manager.for_rollout([])
        if manager is not None:
            manager.for_update("a")
        results.append({n: p.detach().clone() for n, p in model.named_parameters()})
    plain, pooled = results
    assert all(torch.equal(plain[n], pooled[n]) for n in plain)


def test_a_frozen_model_is_pooled_too_and_moves_report_bytes():
    torch.manual_seed(1)
    frozen = build_tiny("tiny-char-2l").model.requires_grad_(False)
    reports = []
    manager = ResidencyManager(between_phases=True, report=lambda **e: reports.append(e))
    manager.add(Resident("ref", CPU, module=frozen))
    pool = HostBuffers(pin=False)
    assert manager.prepare_host_buffers(pool) == sum(_aligned(p.numel() * 4) for p in frozen.parameters())
    ptrs = []
    for _ in range(2):
        manager.for_update("nobody")
        ptrs.append([p.data_ptr() for p in frozen.parameters()])
        manager.for_rollout(["ref"])
    assert ptrs[0] == ptrs[1]
    offloads = [e for e in reports if e["direction"] == "offload"]
    assert len(offloads) == 2 and all(e["bytes"] == sum(p.numel() * 4 for p in frozen.parameters()) for e in offloads)


def test_offload_events_carry_their_rate_in_gb_per_second(events_validator):
    from troupe import EventWriter

    writer = EventWriter(keep=True)
    e = writer.offload(step=1, actor="a", direction="offload", bytes=3_000_000_000, seconds=0.5, parts=["params"], phase="rollout")
    assert e["gbPerSecond"] == 6.0
    assert "gbPerSecond" not in writer.offload(step=1, actor="a", direction="reload", bytes=10, seconds=0.0, parts=["params"])
    for event in writer.events:
        assert not list(events_validator.iter_errors(event))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: torch.cuda.is_available() is false")
def test_on_cuda_the_slabs_are_pinned_and_the_first_offload_lands_in_them():
    model, backend = _backend()
    cuda = torch.device("cuda")
    model.to(cuda)
    manager = ResidencyManager(between_phases=True)
    manager.add(Resident("a", cuda, backend=backend))
    pool = HostBuffers(pin=True)
    manager.prepare_host_buffers(pool)
    assert all(a.slab.is_pinned() for a in pool.arenas.values())
    model(BATCH.to(cuda), labels=BATCH.to(cuda)).loss.backward()
    backend.step()
    backend.zero_grad()
    manager.for_rollout([])
    slab = pool.arenas[("a", "params")].slab
    assert all(p.device.type == "cpu" and p.is_pinned() for p in model.parameters())
    assert all(slab.data_ptr() <= p.data_ptr() < slab.data_ptr() + slab.numel() for p in model.parameters())
    manager.for_update("a")
    assert all(p.device.type == "cuda" for p in model.parameters())


def test_gradients_left_by_a_step_land_in_their_own_reserved_slab_and_count_in_the_moved_bytes():
    """update_actor zeroes gradients at the next update's start, so they exist when the residency moves a
    model after its step: they must go into a slab set aside before the first step (on the H200 their late
    pinned allocations made those moves ~1 GB/s), and the offload event must count their bytes."""
    model, backend = _backend()
    pool = HostBuffers(pin=False)
    moves: list[dict] = []
    manager = ResidencyManager(between_phases=True, report=lambda **e: moves.append(e))
    manager.add(Resident("a", CPU, backend=backend))
    manager.prepare_host_buffers(pool)
    params = list(model.parameters())
    param_bytes = sum(_aligned(p.numel() * p.element_size()) for p in params)
    assert pool.arenas[("a", "grads")].slab.numel() == param_bytes
    for cycle in (1, 2):
        manager.step = cycle
        backend.zero_grad()  # as update_actor does: at the update's start, not after the step
        model(BATCH, labels=BATCH).loss.backward()
        backend.step()
        manager.for_rollout([])
        grads = pool.arenas[("a", "grads")]
        lo = grads.slab.data_ptr()
        assert all(lo <= p.grad.data_ptr() < lo + grads.slab.numel() for p in params), "gradients are views of their slab"
        manager.for_update("a")
    assert pool.late_bytes == 0
    offloads = [e for e in moves if e["direction"] == "offload" and "params" in e["parts"]]
    raw = sum(p.numel() * p.element_size() for p in params)
    assert offloads and all(e["bytes"] >= 2 * raw for e in offloads), [e["bytes"] for e in offloads]  # params + grads
