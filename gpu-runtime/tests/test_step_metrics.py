"""Every per-step, per-actor metric the dashboard charts is emitted, with values that make sense."""

import math

import pytest
from runtime_helpers import small_spec

from troupe import run_spec

EXPECTED = {
    "reward/mean", "reward/std", "reward/letter_match", "reward/letter_match/std",
    "advantage/mean", "advantage/std", "advantage/min", "advantage/max",
    "loss", "kl", "clip_frac", "entropy", "grad_norm", "lr",
    "completion_len", "completion_len/min", "completion_len/max", "truncation_rate",
    "tokens_per_s", "logprob_gap", "step_time_s",
}


def test_every_step_metric_is_emitted(tmp_path):
    spec = small_spec(steps=2)
    spec["actors"][0]["training"]["klBeta"] = 0.05
    result = run_spec(spec, work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    metrics = [e for e in result.events if e["type"] == "metric"]
    assert len(metrics) == 2
    for event in metrics:
        assert event["actor"] == "student"
        values = event["values"]
        assert EXPECTED <= values.keys(), EXPECTED - values.keys()
        assert all(math.isfinite(v) for v in values.values()), values
        assert values["advantage/min"] <= values["advantage/mean"] <= values["advantage/max"]
        assert values["completion_len/min"] <= values["completion_len"] <= values["completion_len/max"] <= 8
        assert 0 <= values["truncation_rate"] <= 1
        assert values["tokens_per_s"] > 0 and values["entropy"] > 0
        # Group-normalised advantages are centred within each group, so their batch mean is 0.
        assert values["advantage/mean"] == pytest.approx(0, abs=1e-5)
