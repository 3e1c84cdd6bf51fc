"""GPU rollout workers (`rollout.workers.gpus`, rollout/placement.py + workers.py; issue 28 item 2) without CUDA:
a stand-in runs the GPU path (each worker told its device `cuda:<id>`, the weights broadcast over the pool's own
process group one parameter at a time in chunks) with the group's backend named "gloo" instead of "nccl" and the
tensors on the CPU. What it checks: each worker was told its GPU, in order; the path chunks (a tiny chunk size: many
broadcasts per parameter) and the workers still hold the trainer's weights bitwise after every update."""

import multiprocessing
from pathlib import Path

from test_async_rollout import wd
from test_rollout_workers import _alive, _Spy, spec

from troupe.events import EventWriter
from troupe.rollout import placement as placement_module
from troupe.rollout import sections
from troupe.rollout import workers as workers_module
from troupe.rollout.placement import WorkerPlacement, placement_of
from troupe.rollout.workers import WorkerPoolSource
from troupe.run import run_spec
from troupe.spec.runspec_types import RolloutWorkers


def test_placement_of_gpus_tells_each_worker_its_gpu_and_uses_nccl():
    gpus = placement_of(RolloutWorkers(count=2, gpus=(3, 1)))
    assert gpus == WorkerPlacement(("cuda:3", "cuda:1"), "nccl") and gpus.on_gpus
    assert placement_of(RolloutWorkers(count=2, processes=True)) == WorkerPlacement(("cpu", "cpu"), "gloo")
    assert set(placement_module.GROUPS) == {"gloo", "nccl"}


def test_gpu_workers_stand_in_gloo_for_nccl_told_devices_and_chunked_broadcast_bitwise(tmp_path: Path, monkeypatch):
    stand_in = WorkerPlacement(("cuda:3", "cuda:1"), "gloo", stand_in="cpu")  # the GPU placement, backend swapped
    monkeypatch.setattr(sections, "placement_of", lambda workers: stand_in)
    monkeypatch.setattr(workers_module, "CHUNK_BYTES", 256)  # 64 floats a broadcast: every parameter in many chunks
    broadcasts: list[int] = []
    told: list[dict[int, str]] = []
    original = WorkerPoolSource._broadcast

    def counted(pool, step):
        assert pool.placement is stand_in and pool._chunk_bytes == 256
        calls = []
        pool._group = _Counting(pool._group, calls)
        try:
            original(pool, step)
        finally:
            pool._group = pool._group.inner
        broadcasts.append(len(calls))
        told.append(dict(pool.told))
        assert calls and all(n <= 64 for n in calls)  # no broadcast carries more than one chunk

    monkeypatch.setattr(WorkerPoolSource, "_broadcast", counted)
    spy = _Spy(monkeypatch)
    run = run_spec(spec(steps=2), events=EventWriter(keep=True), work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    assert spy.compared == [1, 2]  # bitwise after every update, through the chunked GPU path
    assert told and all(t == {0: "cuda:3", 1: "cuda:1"} for t in told)  # each worker was told its own GPU
    assert len(spy.params) < broadcasts[0] == broadcasts[1]  # more broadcasts than parameters: chunked
    assert any("on cuda:3, cuda:1; weights broadcast over gloo" in e.get("message", "") for e in run.events)
    assert not any(_alive(p) for p in spy.pids) and multiprocessing.active_children() == []


class _Counting:
    """The weight group, counting each broadcast's elements."""

    def __init__(self, inner, calls: list[int]):
        self.inner, self.calls = inner, calls

    def broadcast(self, tensor, root):
        self.calls.append(tensor.numel())
        return self.inner.broadcast(tensor, root)


def test_gpu_workers_feeding_async_stand_in_take_the_weights_through_the_slots_not_a_collective(tmp_path: Path, monkeypatch):
    """GPU workers with `algorithm.async` (stand-in: the GPU placement, tensors on the CPU): the weights go through the
    host shared-memory slots, never the group's broadcast (a collective the trainer would wait in for workers still
    sampling); each worker was told its GPU and samples with exactly the schedule's version."""
    from test_rollout_workers_async import _VersionSpy, spec as async_spec

    stand_in = WorkerPlacement(("cuda:3", "cuda:1"), "gloo", stand_in="cpu")
    monkeypatch.setattr(sections, "placement_of", lambda workers: stand_in)
    told: list[dict[int, str]] = []

    def no_broadcast(pool, step):
        raise AssertionError("async GPU workers must not take the weights by a broadcast")

    monkeypatch.setattr(WorkerPoolSource, "_broadcast", no_broadcast)
    spy = _VersionSpy(monkeypatch)
    original = WorkerPoolSource.publish

    def publish(pool, step):
        original(pool, step)
        told.append(dict(pool.told))

    monkeypatch.setattr(WorkerPoolSource, "publish", publish)
    run = run_spec(async_spec(steps=4, k=1), events=EventWriter(keep=True), work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    assert spy.checked == [1, 2]  # bitwise at the schedule's version after each update that something samples with
    assert told and all(t == {0: "cuda:3", 1: "cuda:1"} for t in told)
    lags = [e["values"]["staleness/max"] for e in run.events if e["type"] == "metric" and "staleness/max" in e["values"]]
    assert lags == [0.0, 1.0, 1.0, 1.0]
    assert any("on cuda:3, cuda:1; asynchronous, up to 1 updates behind" in e.get("message", "") for e in run.events)
    assert not any(_alive(p) for p in spy.pids) and multiprocessing.active_children() == []
