"""Residency (offload between phases and of one actor's state), micro-batches, bf16 and gradient
checkpointing, on CPU in one process. Offloading CPU -> CPU frees nothing measurable, but the moves,
the freed storages and the books are the same as on a GPU host, and training must not change."""

import copy
import importlib

import pytest
import torch
from runtime_helpers import small_spec
from torch.multiprocessing.reductions import StorageWeakRef

from troupe import EventWriter, run_spec
from troupe.engines.train import BackendSettings, build_backend
from troupe.launch.distributed import SINGLE
from troupe.models.loading import build_tiny
from troupe.residency.manager import Resident, ResidencyManager

METRICS = ("reward/mean", "loss", "grad_norm", "clip_frac", "entropy", "logprob_gap")


def _run(tmp_path, spec):
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    return result


def _metrics(result, actor=None):
    return {m: result.metrics(m, actor) for m in METRICS}


def _two_actors(steps=3, **trainer):
    """Two trainable actors taking turns on one device, each in its own single-turn environment."""
    spec = small_spec(steps=steps, **trainer)
    second = copy.deepcopy(spec["actors"][0])
    second["name"] = "rival"
    second["model"] = {"source": "tiny", "preset": "tiny-char-4l"}  # a bigger one: the peak must be its state alone
    spec["actors"].append(second)
    env = copy.deepcopy(spec["environments"][0])
    env["name"], env["actors"] = "echo2", ["rival"]
    spec["environments"].append(env)
    return spec


def test_offload_between_phases_trains_bitwise_like_no_offload(tmp_path):
    plain = _run(tmp_path / "a", _two_actors(offloadBetweenPhases=False))
    moved = _run(tmp_path / "b", _two_actors(offloadBetweenPhases=True))
    for actor in ("student", "rival"):
        assert _metrics(moved, actor) == _metrics(plain, actor)
    offloads = [e for e in moved.events if e["type"] == "offload"]
    assert not [e for e in plain.events if e["type"] == "offload"]
    # Each step: before the rollout both optimizers leave; each update brings its actor's optimizer back
    # and sends the other actor's parameters away, and the next rollout brings them back.
    by = {(e["actor"], e["direction"], part) for e in offloads for part in e["parts"]}
    for actor in ("student", "rival"):
        for part in ("params", "optimizer"):
            assert {(actor, "offload", part), (actor, "reload", part)} <= by, (actor, part, by)
    assert all(e["bytes"] > 0 and e["seconds"] >= 0 for e in offloads)
    assert {e["step"] for e in offloads} == {1, 2, 3}


def test_offloaded_storages_are_freed_and_come_back_equal():
    loaded = build_tiny("tiny-char-2l")
    training = small_spec()["actors"][0]["training"] | {"backend": "torch", "precision": "fp32", "offload": {"params": False, "optimizer": False}}
    training.setdefault("optimizer", "adamw")
    training.update({"learningRate": 1e-3, "weightDecay": 0.0, "betas": [0.9, 0.999]})
    backend = build_backend(loaded.model, BackendSettings("a", training, torch.device("cpu"), SINGLE))
    # One step, so the optimizer has state to move.
    loaded.model(torch.tensor([[1, 2, 3]])).logits.sum().backward()
    backend.step()
    backend.zero_grad()
    before = {n: p.detach().clone() for n, p in loaded.model.named_parameters()}
    params = list(loaded.model.parameters())
    refs = [StorageWeakRef(p.data.untyped_storage()) for p in params]
    state_refs = [StorageWeakRef(v.untyped_storage()) for s in backend.optimizer.state.values() for v in s.values() if v.dim() > 0]
    manager = ResidencyManager(between_phases=True)
    manager.add(Resident("a", torch.device("cpu"), backend=backend))
    manager.for_rollout([])  # nobody samples: everything goes to the host
    assert all(r.expired() for r in refs), "parameters' old storages still alive after offload"
    assert all(r.expired() for r in state_refs), "optimizer state's old storages still alive after offload"
    assert [p is q for p, q in zip(loaded.model.parameters(), params)] == [True] * len(params)  # identity kept
    assert manager.resident_bytes() == 0
    manager.for_update("a")
    assert {n: p.detach() for n, p in loaded.model.named_parameters()}.keys() == before.keys()
    assert all(torch.equal(p.detach(), before[n]) for n, p in loaded.model.named_parameters())
    assert manager.resident_bytes() == backend.part_bytes("params") + backend.part_bytes("optimizer")


def test_resident_peak_is_the_largest_actors_state_not_the_sum(tmp_path):
    # the loop module itself: `from troupe import train` is the library call until the module has been imported
    train_module = importlib.import_module("troupe.train")

    books = {}
    original = train_module.build_residency

    def spy(trainer, actors, events):  # the loop hands build_residency its typed trainer section
        manager = original(trainer, actors, events)
        books[bool(trainer.offload_between_phases)] = manager
        return manager

    train_module.build_residency = spy
    try:
        _run(tmp_path / "on", _two_actors(steps=2, offloadBetweenPhases=True))
        _run(tmp_path / "off", _two_actors(steps=2, offloadBetweenPhases=False))
    finally:
        train_module.build_residency = original
    on, off = books[True], books[False]
    sizes = {}
    for name, r in on.residents.items():
        sizes[name] = r.part_bytes("params") * 2 + r.part_bytes("optimizer")  # params + grads + optimizer
    assert on.resident_peak == max(sizes.values()), (on.resident_peak, sizes)
    assert off.resident_peak == sum(sizes.values())
    assert on.resident_peak < off.resident_peak


def test_optimizer_offload_of_one_actor_trains_like_none(tmp_path):
    spec = small_spec(steps=3)
    plain = _run(tmp_path / "a", spec)
    spec["actors"][0]["training"]["offload"] = {"params": True, "optimizer": True}
    moved = _run(tmp_path / "b", spec)
    assert _metrics(moved) == _metrics(plain)
    parts = {(e["direction"], tuple(e["parts"])) for e in moved.events if e["type"] == "offload"}
    assert ("offload", ("optimizer",)) in parts and ("reload", ("optimizer",)) in parts


def test_micro_batches_give_the_whole_batch_step(tmp_path):
    for loss_type in ("grpo", "dapo"):
        spec = small_spec(steps=3)
        spec["actors"][0]["training"]["lossType"] = loss_type
        spec["algorithm"]["name"] = loss_type
        whole = _run(tmp_path / f"{loss_type}-whole", spec)
        spec["trainer"]["microBatchSize"] = 3  # 8 rows -> 3 + 3 + 2
        micro = _run(tmp_path / f"{loss_type}-micro", spec)
        for name in METRICS:
            a, b = whole.metrics(name), micro.metrics(name)
            assert len(a) == 3
            for x, y in zip(a, b):
                assert y == pytest.approx(x, rel=1e-5, abs=1e-7), (loss_type, name, a, b)


def test_gradient_checkpointing_gives_the_same_steps(tmp_path):
    spec = small_spec(steps=2)
    plain = _run(tmp_path / "a", spec)
    spec["actors"][0]["training"]["gradientCheckpointing"] = True
    checkpointed = _run(tmp_path / "b", spec)
    for name in METRICS:
        assert checkpointed.metrics(name) == pytest.approx(plain.metrics(name), rel=1e-5, abs=1e-7)
    assert any("gradient checkpointing" in e["message"] for e in checkpointed.events if e["type"] == "log")


def test_bf16_trains_with_fp32_master_weights(tmp_path):
    from troupe import actors as actors_module

    seen = {}
    original = actors_module.build_backend

    def spy(model, settings):
        backend = original(model, settings)
        seen["backend"] = backend
        return backend

    actors_module.build_backend = spy
    try:
        spec = small_spec(steps=2)
        spec["actors"][0]["training"]["precision"] = "bf16"
        result = _run(tmp_path, spec)
    finally:
        actors_module.build_backend = original
    backend = seen["backend"]
    assert {p.dtype for p in backend.module.parameters()} == {torch.float32}  # master weights
    assert all(torch.isfinite(torch.tensor(result.metrics("grad_norm"))))
    assert any("bf16" in e["message"] for e in result.events if e["type"] == "log")
    # bf16 compute differs from fp32 by rounding: the sampler (fp32 master) and trainer (bf16) disagree a little.
    assert max(result.metrics("logprob_gap")) > 0
