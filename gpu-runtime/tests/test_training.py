"""Training settings reach the update: schedule, iterations per batch, KL, seeds."""

import pytest
from runtime_helpers import small_spec

from troupe import run_spec
from troupe.algorithms.lr_schedule import lr_at


def _run(spec, tmp_path):
    result = run_spec(spec, work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    return result


def test_scheduler_length_is_the_real_number_of_steps(tmp_path):
    spec = small_spec(steps=5)
    spec["actors"][0]["training"]["scheduler"] = {"type": "linear", "warmupSteps": 2}
    lrs = _run(spec, tmp_path).metrics("lr")
    assert lrs == pytest.approx([lr_at(s, 3e-3, "linear", 2, 5) for s in range(1, 6)])
    assert lrs == pytest.approx([1.5e-3, 3e-3, 3e-3, 2e-3, 1e-3])


def test_iterations_reuse_the_batch_against_the_old_logprobs(tmp_path):
    spec = small_spec(steps=3)
    spec["actors"][0]["training"].update(iterationsPerBatch=4, learningRate=0.05)
    clip = _run(spec, tmp_path).metrics("clip_frac")
    # Iteration 1 has ratio 1 everywhere; later iterations move away from the old log-probs and get clipped.
    assert max(clip) > 0


def test_single_iteration_never_clips(tmp_path):
    spec = small_spec(steps=3)
    spec["actors"][0]["training"]["learningRate"] = 0.05
    assert _run(spec, tmp_path).metrics("clip_frac") == [0.0, 0.0, 0.0]


def test_kl_to_the_frozen_reference_starts_at_zero(tmp_path):
    spec = small_spec(steps=3)
    spec["actors"][0]["training"].update(klBeta=0.1, learningRate=0.02)
    kl = _run(spec, tmp_path).metrics("kl")
    assert kl[0] == 0.0  # before the first update the policy is the reference
    assert kl[-1] > 0


def test_the_seed_decides_the_run(tmp_path):
    def completions(seed):
        spec = small_spec(steps=2)
        spec["seed"] = seed
        return [e["messages"][-1]["content"] for e in _run(spec, tmp_path).events if e["type"] == "episode"]

    assert completions(1) == completions(1)
    assert completions(1) != completions(2)
