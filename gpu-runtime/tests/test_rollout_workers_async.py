"""Rollout workers feeding asynchronous rollouts (`rollout.workers` + `algorithm.async.maxStaleness: K`,
rollout/workers.py; issue 28 item 2): the workers sample ahead on the async schedule (batch t with the weights after
max(b, t - 1 - K) updates), the weights reach them through shared-memory slots. Each worker samples with exactly the
trainer's weights of the schedule's version (bitwise), staleness is reported per actor and never exceeds K, TIS
works on it, a checkpoint carries the batches in flight so resume is exact, and no process or slot outlives the run."""

import multiprocessing
import os
from pathlib import Path

import torch
from test_async_rollout import _StopAfterStep, episodes, per_step, wd
from test_rollout_workers import POOL, _alive, pool_pids, spec as workers_spec

from troupe.events import EventWriter
from troupe.rollout.async_process import SEGMENT_PREFIX
from troupe.rollout.async_rollout import IN_FLIGHT_FILE
from troupe.rollout.workers import WorkerPoolSource
from troupe.run import run_spec


def spec(steps: int = 4, k: int = 1, **trainer) -> dict:
    s = workers_spec(steps=steps, **trainer)
    s["algorithm"]["async"] = {"maxStaleness": k}
    return s


def _segments() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith(f"{SEGMENT_PREFIX}-{os.getpid()}-")}


class _VersionSpy:
    """After each publish: the version last handed to the workers, and (once every worker has read its queue up to
    then: the rows of the step that samples with it) every worker's weights against the trainer's, bitwise."""

    def __init__(self, monkeypatch):
        self.checked: list[int] = []
        self.pids: list[int] = []
        original = WorkerPoolSource.publish
        spy = self

        def publish(pool, step):
            original(pool, step)
            spy.pids = pool.pids
            if pool._published != step:
                return  # no batch samples with this version (past the run's end): nothing was handed out
            trainer = {(name, param): dict(pool.actors[name].loaded.model.named_parameters())[param].detach() for name, param in pool.table}
            for held in pool.worker_weights():
                assert sorted(held) == sorted(trainer) and trainer
                for key, tensor in trainer.items():
                    assert torch.equal(held[key], tensor), (step, key)
            # The rows handed out with this version are the schedule's: step + 1 + K samples with update `step`.
            assert pool._versions[step + 1 + pool.k] == step
            spy.checked.append(step)

        monkeypatch.setattr(WorkerPoolSource, "publish", publish)


def test_workers_sample_ahead_with_the_schedules_weights_and_report_staleness(tmp_path: Path, monkeypatch):
    spy = _VersionSpy(monkeypatch)
    before = _segments()
    s = spec(steps=5, k=1)
    s["algorithm"]["importanceCorrection"] = {"kind": "tis", "cap": 2}
    run = run_spec(s, events=EventWriter(keep=True), work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    assert spy.checked == [1, 2, 3]  # update 4 and 5 sample nothing (step 6, 7 are past the end)
    metrics = [e for e in run.events if e["type"] == "metric" and "staleness/max" in e["values"]]
    lags = [e["values"]["staleness/max"] for e in metrics]
    assert lags == [0.0, 1.0, 1.0, 1.0, 1.0] and lags == [e["values"]["staleness/mean"] for e in metrics]  # t - 1 - max(0, t - 2)
    assert all(e.get("actor") for e in metrics)  # per actor
    tis = [e["values"]["tis/weight_mean"] for e in run.events if e["type"] == "metric" and "tis/weight_mean" in e["values"]]
    assert len(tis) == 5 and all(w > 0 for w in tis) and any(abs(w - 1) > 1e-6 for w in tis[1:])  # stale batches are reweighted
    pooled = [e["values"] for e in run.events if e["type"] == "metric" and POOL <= set(e["values"])]
    assert len(pooled) == 5 and all(v["time/rollout_busy_s"] > 0 for v in pooled)
    assert any("asynchronous, up to 1 updates behind" in e.get("message", "") for e in run.events)
    assert not any(_alive(p) for p in spy.pids) and len(spy.pids) == 2  # no process outlives the run
    assert multiprocessing.active_children() == []
    assert _segments() == before  # nor any weight slot


def test_resume_with_batches_in_flight_is_exact(tmp_path: Path):
    """Cancelled after step 2 (checkpoint at 2, saved before update 2 is published): step 3 was handed out and
    sampled ahead with update 1; the checkpoint saves it and the data position after its rows, and the resumed run trains on them, then goes on as the
    straight run did."""
    straight = run_spec(spec(steps=5, checkpointEvery=2), events=EventWriter(keep=True), work_dir=wd(tmp_path / "straight"))
    kept = EventWriter(keep=True)
    first = run_spec(spec(steps=5, checkpointEvery=2), events=kept, work_dir=wd(tmp_path / "resumed"), stop=_StopAfterStep(kept, 2))
    assert straight.state == "succeeded" and first.state == "cancelled" and first.steps_completed == 2, (straight.message, first.message)
    pids = pool_pids(kept.events)
    assert len(pids) == 2 and not any(_alive(p) for p in pids)
    folder = next((tmp_path / "resumed").rglob(IN_FLIGHT_FILE)).parent
    assert [b["step"] for b in torch.load(folder / IN_FLIGHT_FILE, weights_only=False)["batches"]] == [3]
    second = run_spec(spec(steps=5, checkpointEvery=2), events=EventWriter(keep=True), work_dir=wd(tmp_path / "resumed"), resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{key: v for key, v in per_step(first.events).items() if key[0] <= 2}, **per_step(second.events)}
    assert got == want and len(want) == 5
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]
    assert multiprocessing.active_children() == []
