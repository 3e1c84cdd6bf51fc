"""Phase seconds per step (phase_clock.py): the update reports forward, backward, optimizer and
reference seconds, and the loop the step's offload seconds, as `time/<phase>_s` metrics."""

from __future__ import annotations

import time

import torch
from runtime_helpers import small_spec

from troupe import EventWriter, run_spec
from troupe.algorithms.phase_clock import PhaseClock


def test_phases_add_up_per_name_on_cpu():
    clock = PhaseClock(torch.device("cpu"))
    for _ in range(2):
        with clock.phase("forward"):
            time.sleep(0.01)
    with clock.phase("backward"):
        time.sleep(0.03)
    got = clock.seconds()
    assert set(got) == {"time/forward_s", "time/backward_s"}
    assert 0.02 <= got["time/forward_s"] < 0.2 and 0.03 <= got["time/backward_s"] < 0.2


def test_a_run_reports_phase_seconds_every_step(tmp_path):
    spec = small_spec(steps=2)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    metrics = [e for e in result.events if e["type"] == "metric"]
    assert {e["step"] for e in metrics} == {1, 2}
    for e in metrics:
        values = e["values"]
        for phase in ("forward", "backward", "optimizer", "reference", "offload"):
            assert f"time/{phase}_s" in values, (phase, sorted(values))
        assert values["time/forward_s"] > 0 and values["time/backward_s"] > 0 and values["time/optimizer_s"] > 0
        assert values["time/offload_s"] == 0  # one actor: nothing moves
        parts = sum(values[f"time/{p}_s"] for p in ("forward", "backward", "optimizer", "reference"))
        assert parts <= values["step_time_s"]
