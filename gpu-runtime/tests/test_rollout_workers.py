"""Rollout workers (`rollout.workers: {count, processes: true}`, rollout/workers.py; issue 28 item 2): 2 CPU worker
processes sample, 1 trainer trains. After every update the workers hold exactly the trainer's weights (bitwise);
a killed worker fails the run (it is not replaced) with a message naming it; no worker outlives the run, whichever
way it ends; each step reports the pools' busy, idle and weight-sync seconds; what is not built is refused by field."""

import copy
import json
import multiprocessing
import os
from pathlib import Path

import pytest
import torch
from test_async_rollout import VARIED, _StopAfterStep, episodes, per_step, wd
from runtime_helpers import small_spec

from troupe.events import EventWriter
from troupe.rollout import workers as workers_module
from troupe.rollout.workers import WorkerPoolSource, chunks, split
from troupe.run import run_spec
from troupe.spec import SpecError, validate_spec
from troupe.spec.rollout_rules import rollout_issues

POOL = {"time/rollout_busy_s", "time/rollout_idle_s", "time/trainer_busy_s", "time/trainer_idle_s", "time/weight_sync_s"}


def spec(steps: int = 3, count: int = 2, **trainer) -> dict:
    s = small_spec(steps=steps, **trainer)
    s["rewards"][0] = copy.deepcopy(VARIED)  # varies within groups: real updates
    s["rollout"] = {"workers": {"count": count, "processes": True}}
    return s


def pool_pids(events) -> list[int]:
    """The workers' pids, from the run's own log line."""
    import re

    found = [re.search(r"rollout workers: \d+ processes \(pids ([\d, ]+)\)", e.get("message", "")) for e in events]
    return [int(p) for m in found if m for p in m.group(1).split(", ")]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return "\nState:\tZ" not in status.read()
    except FileNotFoundError:
        return False


class _Spy:
    """Wraps WorkerPoolSource.publish: after each broadcast, every worker's parameters against the trainer's."""

    def __init__(self, monkeypatch):
        self.compared: list[int] = []
        self.pids: list[int] = []
        self.sums: list[float] = []
        self.params: list[tuple[str, str]] = []
        original = WorkerPoolSource.publish
        spy = self

        def publish(pool, step):
            original(pool, step)
            spy.pids = pool.pids
            spy.params = list(pool.table)
            trainer = {(name, param): dict(pool.actors[name].loaded.model.named_parameters())[param].detach() for name, param in pool.table}
            for held in pool.worker_weights():
                assert sorted(held) == sorted(trainer) and trainer
                for key, tensor in trainer.items():
                    assert held[key].dtype == tensor.dtype and torch.equal(held[key], tensor), (step, key)  # bitwise
            spy.compared.append(step)
            spy.sums.append(sum(float(t.double().sum()) for t in trainer.values()))

        monkeypatch.setattr(WorkerPoolSource, "publish", publish)


def test_after_every_update_the_workers_hold_the_trainers_weights_bitwise(tmp_path: Path, monkeypatch):
    spy = _Spy(monkeypatch)
    run = run_spec(spec(steps=3), events=EventWriter(keep=True), work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    assert spy.compared == [1, 2, 3]
    assert len(spy.pids) == 2 and not any(_alive(p) for p in spy.pids)  # no worker outlives the run
    assert multiprocessing.active_children() == []
    assert len(set(spy.sums)) == 3  # the weights moved every update: what the workers matched was new each time


def test_a_lora_actor_broadcasts_its_adapter_only_and_the_workers_match_bitwise(tmp_path: Path, monkeypatch):
    spy = _Spy(monkeypatch)
    s = spec(steps=2)
    s["actors"][0]["training"]["lora"] = {"rank": 4, "alpha": 8, "dropout": 0.0, "targetModules": ["q_proj", "v_proj"]}
    run = run_spec(s, events=EventWriter(keep=True), work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    assert spy.compared == [1, 2] and spy.params and all("lora" in name for _, name in spy.params)


@pytest.fixture(scope="module")
def two_steps(tmp_path_factory):
    """spec(steps=2), run once for the tests that only read it (each keeps its own assertions): most of a run's time
    here is starting the worker processes (spawn re-imports torch and transformers)."""
    return run_spec(spec(steps=2), events=EventWriter(keep=True), work_dir=wd(tmp_path_factory.mktemp("two-steps")))


def test_each_step_reports_the_pools_busy_idle_and_sync_seconds(two_steps):
    run = two_steps
    assert run.state == "succeeded", run.message
    pooled = [e for e in run.events if e["type"] == "metric" and POOL <= set(e["values"])]
    assert [e["step"] for e in pooled] == [1, 2]
    for e in pooled:
        v = e["values"]
        assert v["time/rollout_busy_s"] > 0 and v["time/weight_sync_s"] > 0 and v["time/trainer_busy_s"] > 0
        assert all(v[k] >= 0 for k in POOL)
    assert any("rollout workers: 2 processes (pids" in e.get("message", "") for e in run.events)


def test_the_workers_sample_the_synchronous_loops_rows(tmp_path: Path, two_steps):
    """The trainer draws the rows (the run's samplers) and splits them: the prompts match the synchronous run's."""
    sync_spec = spec(steps=2)
    del sync_spec["rollout"]
    sync = run_spec(sync_spec, events=EventWriter(keep=True), work_dir=wd(tmp_path / "sync"))
    pool = two_steps
    assert sync.state == pool.state == "succeeded", (sync.message, pool.message)

    def prompts(events):  # in order, with their group numbers: one part per environment, as the sync loop makes
        return [(e["step"], e["group"], e["sample"], e["messages"][0]["content"]) for e in events if e["type"] == "episode"]

    assert prompts(pool.events) == prompts(sync.events) and prompts(sync.events)


class _KillWorkerAt(EventWriter):
    def __init__(self, n: int):
        super().__init__(keep=True)
        self.n, self.killed = n, []

    def metric(self, step, values, actor=None):
        out = super().metric(step, values, actor)
        if step == self.n and not self.killed:
            for child in multiprocessing.active_children():
                if child.name == "troupe-rollout-worker-1":
                    self.killed.append(child.pid)
                    child.kill()
                    child.join()
        return out


def test_a_killed_worker_fails_the_run_and_no_worker_outlives_it(tmp_path: Path, monkeypatch):
    """Decision: a dead worker is not replaced; the run fails, naming the worker and how it died."""
    spy = _Spy(monkeypatch)
    events = _KillWorkerAt(1)
    run = run_spec(spec(steps=4), events=events, work_dir=wd(tmp_path))
    assert events.killed, "the test killed no worker"
    assert run.state == "failed", run.message
    assert "rollout worker 1" in run.message and "SIGKILL" in run.message and "not replaced" in run.message, run.message
    assert multiprocessing.active_children() == []
    pids = pool_pids(events.events)
    assert len(pids) == 2 and events.killed[0] in pids and not any(_alive(p) for p in pids)


def test_a_worker_that_raises_fails_the_run_with_its_traceback(tmp_path: Path, monkeypatch):
    """The worker's own traceback reaches the run's message (only workers score: the reward raises in them)."""
    s = spec(steps=3)
    s["rewards"][0]["source"]["code"] = "def reward(prompt, completion, **row):\n    raise ValueError('worker reward exploded')\n"
    s["rewards"][0]["maxFailuresInARow"] = 1  # the first failed call fails the reward (RewardFailure)
    run = run_spec(s, events=EventWriter(keep=True), work_dir=wd(tmp_path))
    assert run.state == "failed", run.message
    assert "rollout worker" in run.message and "Traceback" in run.message and "worker reward exploded" in run.message, run.message
    assert multiprocessing.active_children() == []
    pids = pool_pids(run.events)
    assert len(pids) == 2 and not any(_alive(p) for p in pids)


def test_a_cancelled_run_ends_its_workers_and_resume_is_exact(tmp_path: Path):
    """Cancelled (SIGTERM) after step 2: the workers end with it; resumed from its checkpoint, the run continues
    as the straight run did (the rows come from the run's samplers, the workers' RNGs from (seed, step, worker))."""
    straight = run_spec(spec(steps=4, checkpointEvery=2), events=EventWriter(keep=True), work_dir=wd(tmp_path / "straight"))
    kept = EventWriter(keep=True)
    first = run_spec(spec(steps=4, checkpointEvery=2), events=kept, work_dir=wd(tmp_path / "resumed"), stop=_StopAfterStep(kept, 2))
    assert straight.state == "succeeded" and first.state == "cancelled" and first.steps_completed == 2, (straight.message, first.message)
    pids = pool_pids(kept.events)
    assert len(pids) == 2 and not any(_alive(p) for p in pids)
    assert multiprocessing.active_children() == []
    second = run_spec(spec(steps=4, checkpointEvery=2), events=EventWriter(keep=True), work_dir=wd(tmp_path / "resumed"), resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{key: v for key, v in per_step(first.events).items() if key[0] <= 2}, **per_step(second.events)}
    assert got == want and len(want) == 4
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]


def test_split_and_chunks():
    assert split(5, 2) == [3, 2] and split(1, 2) == [1, 0] and sum(split(7, 3)) == 7
    t = torch.arange(10, dtype=torch.float32)
    original = workers_module.CHUNK_BYTES
    try:
        workers_module.CHUNK_BYTES = 12  # 3 floats a chunk
        parts = chunks(t)
        assert [p.numel() for p in parts] == [3, 3, 3, 1]
        assert all(p.data_ptr() == t.data_ptr() + 4 * 3 * i for i, p in enumerate(parts))  # views, not copies
    finally:
        workers_module.CHUNK_BYTES = original


@pytest.mark.parametrize(
    "change, path",
    [
        (lambda w, s: w.update(gpus=[0, 1]) or w.pop("processes"), "rollout.workers.gpus"),  # no CUDA on this runner
        (lambda w, s: (w.update(gpus=[0, 1]), w.pop("processes"), s["trainer"].update(device="cpu")), "trainer.device"),
        (lambda w, s: s["algorithm"].update(dynamicSampling={"enabled": True, "maxRounds": 2}), "algorithm.dynamicSampling.enabled"),
        (lambda w, s: s["trainer"].update(device="cuda"), "trainer.device"),
        (lambda w, s: s["algorithm"].update(name="sft"), "rollout.workers"),
    ],
)
def test_what_the_pool_cannot_honour_is_refused_by_field(change, path):
    s = spec()
    change(s["rollout"]["workers"], s)
    paths = [i.path for i in rollout_issues(validate_spec(s), cuda_available=False)]
    assert path in paths, paths


def test_a_spec_with_workers_passes_the_rules_and_one_placement_is_wanted():
    assert rollout_issues(validate_spec(spec()), cuda_available=False) == []
    ahead = spec()
    ahead["algorithm"]["async"] = {"maxStaleness": 1}  # workers feed asynchronous rollouts (test_rollout_workers_async.py)
    assert rollout_issues(validate_spec(ahead), cuda_available=False) == []
    on_gpus = spec()
    on_gpus["rollout"]["workers"] = {"count": 2, "gpus": [1, 2]}
    on_gpus["trainer"]["device"] = "cuda"
    assert rollout_issues(validate_spec(on_gpus), cuda_available=True) == []  # GPU workers on a CUDA host
    on_gpus["algorithm"]["async"] = {"maxStaleness": 1}  # feeding async rollouts (test_rollout_workers_gpu.py)
    assert rollout_issues(validate_spec(on_gpus), cuda_available=True) == []
    del on_gpus["algorithm"]["async"]
    assert [i.path for i in rollout_issues(validate_spec(on_gpus), cuda_available=False)] == ["rollout.workers.gpus"]
    for workers, path in (({"count": 2}, "rollout.workers.processes"), ({"count": 2, "processes": True, "gpus": [0, 1]}, "rollout.workers.processes"), ({"count": 2, "gpus": [0]}, "rollout.workers.gpus")):
        s = spec()
        s["rollout"]["workers"] = workers
        assert path in [i.path for i in rollout_issues(validate_spec(s), cuda_available=True)], workers
    s = spec()
    s["rollout"]["workers"]["threads"] = 2  # not a field: the schema refuses it
    with pytest.raises(SpecError):
        validate_spec(s)


def test_a_collaborative_run_plays_whole_episodes_in_the_workers(tmp_path: Path, monkeypatch):
    """Multi-turn: both actors' turns are played in the workers (each holds both actors' sampling copies), both
    actors' weights reach them bitwise after every update, and the step's groups are the synchronous run's: the
    same rows, numbered as one batch (each worker numbers its own from 0; advantages are normalised per group)."""
    from test_async_multi_turn import collaborative

    spy = _Spy(monkeypatch)
    sync = run_spec(collaborative(tmp_path / "sync", steps=2, episodesPerStep=64), events=EventWriter(keep=True), work_dir=wd(tmp_path / "sync"))
    s = collaborative(tmp_path / "pool", steps=2, episodesPerStep=64)
    s["rollout"] = {"workers": {"count": 2, "processes": True}}
    pool = run_spec(s, events=EventWriter(keep=True), work_dir=wd(tmp_path / "pool"))
    assert sync.state == pool.state == "succeeded", (sync.message, pool.message)
    assert spy.compared == [1, 2]
    reporting = {e["actor"] for e in pool.events if e["type"] == "metric" and "time/weight_sync_s" in e["values"]}
    assert reporting == {"Alice", "Bob"}  # both trained actors' weights were broadcast, and each reports the pool

    def groups(events):  # every episode (episodesPerStep covers them all)
        return [(e["step"], e["group"], e["sample"], e["datasetRow"]) for e in events if e["type"] == "episode"]

    assert groups(pool.events) == groups(sync.events)
    assert len({(g[0], g[1]) for g in groups(sync.events)}) == 4  # 2 steps x 2 groups: one per worker in the pool


@pytest.mark.slow
def test_the_workers_exit_when_the_trainer_is_killed(tmp_path: Path):
    """kill -9 of the trainer (it never closes the pool): each worker sees its parent gone and exits."""
    import re
    import signal
    import subprocess
    import sys
    import time

    from runtime_helpers import TEST_THREADS, demo_input

    s = demo_input()
    # 32 prompts x 8 samples: a worker's batch that nobody reads is more than the pipe holds (64 KiB).
    s["trainer"].update(steps=500, cpuThreads=TEST_THREADS, promptsPerStep=32)
    s["rollout"] = {"workers": {"count": 2, "processes": True}}
    (tmp_path / "spec.json").write_text(json.dumps(s))
    stderr = (tmp_path / "stderr.txt").open("w")
    trainer = subprocess.Popen([sys.executable, "-m", "troupe", "run", "spec.json", "--work-dir", str(tmp_path)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=stderr, text=True)
    assert trainer.stdout is not None
    pids: list[int] = []
    steps = 0
    for line in trainer.stdout:
        found = re.search(r"rollout workers: \d+ processes \(pids ([\d, ]+)\)", line)
        pids = [int(p) for p in found.group(1).split(", ")] if found else pids
        steps += '"type":"metric"' in line
        if pids and steps >= 1:
            break
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    time.sleep(1)  # mid-step: the workers are sampling (or have sent a batch nobody will read)
    trainer.send_signal(signal.SIGKILL)
    trainer.wait()
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = [p for p in pids if _alive(p)]
    for p in alive:
        os.kill(p, signal.SIGKILL)
    stderr.close()
    assert not alive, f"workers {alive} outlived their trainer by 30 s"
