"""One rule for what a copy of the sampling side in another process cannot carry (rollout/copy_blockers.py), as
the process producer and rollout workers word it: an actor on a GPU, rewards passed in as Python objects, LoRA
actors sharing one base, an actor with its own engine (vLLM). The device is the actors' own (no run device is handed in)."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from runtime_helpers import small_spec

from troupe.rewards.reward_api import InProcessReward
from troupe.rollout.async_process import process_producer_ok
from troupe.rollout.workers import workers_ok
from troupe.spec.runspec_types import RunSpec

CPU, CUDA = torch.device("cpu"), torch.device("cuda", 0)


def actor(device: torch.device = CPU, shares_base: bool = False, own_engine: bool = False) -> SimpleNamespace:
    """An actor as the rule reads it; `own_engine`: one sampling with an engine that holds its own weights (vLLM)."""
    engine = SimpleNamespace(holds_own_weights=True) if own_engine else None
    return SimpleNamespace(device=device, shares_base=shares_base, engine=engine)


def algorithm(k: int):
    spec = small_spec(steps=2)
    spec["algorithm"]["async"] = {"maxStaleness": k}
    return RunSpec.from_dict(spec).algorithm


def in_process_reward() -> InProcessReward:
    return object.__new__(InProcessReward)  # only its type is read


def test_cpu_actors_and_spec_rewards_can_be_copied():
    actors, rewards = {"a": actor(), "b": actor()}, {"r": object()}
    assert workers_ok(actors, rewards) is None
    assert process_producer_ok(algorithm(1), actors, rewards) is None


def test_each_refusal_in_each_callers_words():
    cases = [
        ({"a": actor(), "b": actor(CUDA)}, {}, "CPU rollout workers need a CPU trainer", "runs on CPU hosts only"),
        ({"a": actor()}, {"r": in_process_reward()}, "cannot be rebuilt in a worker process", "cannot be rebuilt in another process"),
        ({"a": actor(shares_base=True)}, {}, "cannot be copied to a worker", "are copied as one"),
        ({"a": actor(own_engine=True)}, {}, "own vLLM engine cannot be copied", "the thread samples with it"),
    ]
    for actors, rewards, worker_words, producer_words in cases:
        refused = workers_ok(actors, rewards)
        assert refused is not None and worker_words in refused and refused.startswith("rollout.workers")
        why_thread = process_producer_ok(algorithm(1), actors, rewards)
        assert why_thread is not None and producer_words in why_thread


def test_the_gpu_refusal_comes_first_and_k0_keeps_the_thread():
    actors = {"a": actor(CUDA, shares_base=True)}
    assert "CPU trainer" in (workers_ok(actors, {"r": in_process_reward()}) or "")
    assert "nothing to overlap" in (process_producer_ok(algorithm(0), {"a": actor()}, {}) or "")
