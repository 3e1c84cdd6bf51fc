"""Learning check with `backend: "vllm"`: the seeded demo learns when its actor samples through the vLLM engine
(here the stand-in, tests/vllm_standin.py: vLLM is on no machine of this workplace), sleeping at level 2 while
it trains and getting the trainer's weights pushed in memory before every rollout.

The demo's task and margins are test_learning.py's (see there why): a rise of at least +0.15 from the first
20 steps to the last 20, and a last-20 mean of at least twice the best prompt-blind policy (1/8). The model
is the demo's tiny preset saved as a folder (vLLM loads folders; tiny presets cannot be loaded by it)."""

import time

import pytest
from runtime_helpers import TEST_THREADS, demo_input
from test_learning import MIN_RISE, PROMPT_BLIND_BEST
from test_rollout_engines_standin import tiny_folder, use_standin

from troupe import EventWriter, run_spec


@pytest.mark.slow
def test_demo_learns_with_the_vllm_backend(tmp_path, monkeypatch):
    engines: list = []
    use_standin(monkeypatch, engines)
    spec = demo_input()
    spec["trainer"]["cpuThreads"] = TEST_THREADS
    actor = spec["actors"][0]
    actor.update(model={"source": "local", "path": str(tiny_folder(tmp_path / "model", seed=spec["seed"]))}, backend="vllm", vllm={"sleepLevel": 2})
    started = time.monotonic()
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "run")
    assert result.state == "succeeded", result.message
    rewards = result.metrics("reward/mean")
    assert len(rewards) == spec["trainer"]["steps"] == 120
    head, tail = sum(rewards[:20]) / 20, sum(rewards[-20:]) / 20
    print(f"demo with vllm (stand-in): {time.monotonic() - started:.1f}s, reward first 20 steps {head:.3f}, last 20 steps {tail:.3f}")
    assert tail - head >= MIN_RISE, (head, tail)
    assert tail >= 2 * PROMPT_BLIND_BEST, tail
    # It really sampled through the engine, every step, with pushed weights (level 2 leaves nothing else).
    (llm,) = engines
    assert sum(1 for c in llm.calls if c[0] == "generate") == 120
    assert sum(1 for c in llm.calls if c[0] == "load_weights") == 120
    assert max(result.metrics("logprob_gap")) < 1e-4
