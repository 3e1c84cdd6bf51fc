"""Asynchronous rollouts with a vLLM actor (stand-in: tests/vllm_standin.py, vLLM is on no machine here).

The producer thread samples with the actor's own engine, which stays awake (`vllm.sleepLevel: 0`), and pushes the
schedule's weights to it through the native weight-sync calls: the batch of step t is sampled with exactly the
trainer's weights after max(b, t - 1 - K) updates (checked tensor by tensor against what the trainer published),
evaluation samples with the latest weights, staleness <= K is reported per actor, and a stop with batches in
flight resumes exactly. The stand-in raises on any call out of order (a generate inside an open update, a push
to sleeping weights), so a race between the two threads would fail these runs."""

import threading
from pathlib import Path

import pytest
import torch
import vllm_standin
from test_async_rollout import _StopAt, episodes, per_step, spec, wd
from test_rollout_engines_standin import tiny_folder, use_standin

from troupe.control import RunControl
from troupe.engines.rollout.colocate import trainer_weights
from troupe.rollout import async_rollout
from troupe.run import run_spec

K = 1
PRODUCER = "troupe-rollout-producer"


def vllm_spec(folder: Path, steps: int, **trainer) -> dict:
    s = spec(steps=steps, k=K, **trainer)
    s["actors"][0].update(model={"source": "local", "path": str(folder)}, backend="vllm", vllm={"sleepLevel": 0})
    return s


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tiny_folder(tmp_path_factory.mktemp("tiny-vllm"), seed=0)


@pytest.fixture
def recorded(monkeypatch):
    """Every engine made, every generate's thread and weights, and the trainer's weights of every version."""
    engines: list = []
    use_standin(monkeypatch, engines)
    threads: list[str] = []
    versions: dict[int, dict[str, torch.Tensor]] = {}
    generate = vllm_standin.LLM.generate

    def recording_generate(self, *args, **kwargs):
        threads.append(threading.current_thread().name)
        return generate(self, *args, **kwargs)

    def weights(producer) -> dict[str, torch.Tensor]:
        (name,) = producer.lent
        return {n: t.detach().clone() for n, t in trainer_weights(producer.actors[name])}

    init, publish = async_rollout.RolloutProducer.__init__, async_rollout.RolloutProducer.publish

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        versions[self._base] = weights(self)

    def recording_publish(self, version):
        versions[version] = weights(self)
        return publish(self, version)

    monkeypatch.setattr(vllm_standin.LLM, "generate", recording_generate)
    monkeypatch.setattr(async_rollout.RolloutProducer, "__init__", recording_init)
    monkeypatch.setattr(async_rollout.RolloutProducer, "publish", recording_publish)
    return engines, threads, versions


def same(sampled: dict[str, torch.Tensor], trainer: dict[str, torch.Tensor]) -> bool:
    shared = set(sampled) & set(trainer)
    assert len(shared) >= len(sampled) - 1, sorted(set(sampled) - shared)  # all but a tied lm_head
    return all(torch.equal(sampled[n], trainer[n]) for n in shared)


def test_k1_samples_each_batch_with_the_schedules_weights_and_evaluates_with_the_latest(tmp_path: Path, folder: Path, recorded):
    engines, threads, versions = recorded
    steps = 5
    doc = vllm_spec(folder, steps, evalEvery=2)
    doc["datasets"][0]["evalFraction"] = 0.25
    doc["algorithm"]["importanceCorrection"] = {"kind": "tis", "cap": 2}
    run = run_spec(doc, work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    (llm,) = engines
    # The thread producer, for the reason the process producer cannot copy this actor.
    assert any("producer thread" in e["message"] and "vLLM" in e["message"] for e in run.events if e["type"] == "log"), "no log of the producer thread"
    # Staleness per actor: the lag grows to K and stays; one weights version per batch.
    lags = [e for e in run.events if e["type"] == "metric" and "staleness/max" in e["values"]]
    assert [e["actor"] for e in lags] == [doc["actors"][0]["name"]] * steps
    assert [e["values"]["staleness/max"] for e in lags] == [float(min(t - 1, K)) for t in range(1, steps + 1)]
    # TIS corrects the stale samples: reported every step (the lagging ones are weighted away from 1).
    weights = run.metrics("tis/weight_mean")
    assert len(weights) == steps and any(abs(w - 1) > 1e-4 for w in weights[K:])
    # The engine never slept, and the producer's batches were sampled in its own thread, one generate per step.
    assert not any(c[0] == "sleep" for c in llm.calls)
    produced = [w for w, t in zip(llm.sampled_with, threads) if t == PRODUCER]
    evaluated = [w for w, t in zip(llm.sampled_with, threads) if t != PRODUCER]
    assert len(produced) == steps and evaluated
    # The weights changed from version to version (else the checks below could not fail)...
    assert all(not same(versions[v], versions[v + 1]) for v in range(steps - 1))
    # ... and step t's batch was sampled with exactly the weights after max(0, t - 1 - K) updates.
    for t, sampled in enumerate(produced, start=1):
        assert same(sampled, versions[max(0, t - 1 - K)]), t
    # Evaluation (after steps 2, 4 and the last) sampled with the trainer's latest weights, though the producer lags.
    evals = [next((v for v in (2, 4, 5) if same(w, versions[v])), None) for w in evaluated]
    assert evals == sorted(evals) and set(evals) == {2, 4, 5}, evals


def test_stop_with_batches_in_flight_resumes_exactly(tmp_path: Path, folder: Path, recorded):
    straight = run_spec(vllm_spec(folder, 5), work_dir=wd(tmp_path / "straight"))
    assert straight.state == "succeeded", straight.message
    control = RunControl()
    first = run_spec(vllm_spec(folder, 5), events=_StopAt(control, 2), work_dir=wd(tmp_path / "resumed"), control=control)
    assert first.state == "stopped" and first.steps_completed == 2, first.message
    saved = torch.load(tmp_path / "resumed" / "checkpoints" / "step-2" / "in_flight.pt", weights_only=False)
    assert [b["step"] for b in saved["batches"]] == [3, 4] and [b["version"] for b in saved["batches"]] == [1, 2]
    second = run_spec(vllm_spec(folder, 5), work_dir=wd(tmp_path / "resumed"), resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{key: v for key, v in per_step(first.events).items() if key[0] <= 2}, **per_step(second.events)}
    assert got == want and len(want) == 5
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]


def test_sleep_level_0_keeps_the_engine_awake_in_the_synchronous_loop_too(tmp_path: Path, folder: Path, recorded):
    engines, _, _ = recorded
    doc = vllm_spec(folder, 2)
    del doc["algorithm"]["async"]
    run = run_spec(doc, work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    (llm,) = engines
    assert not any(c[0] == "sleep" for c in llm.calls)
    assert sum(1 for c in llm.calls if c[0] == "finish_weight_update") == 2  # the trainer's weights before each rollout
