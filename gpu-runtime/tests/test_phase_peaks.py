"""A phase's memory peak is its own (issue #25, the H200's first gpu-check): with a frozen actor beside the
trainee, between-phase offload is on, and the rollout's CUDA peak read 836 MiB against an estimate of 452
MiB. The estimate was right about the rollout's arrangement (the student's parameters and gradients, its
AdamW state and the judge on the host: 8 + 0 bytes per parameter, not 16); the measurement was not: the
peak window opened at the previous update's report and so held the update's whole training state until
the rollout arrangement offloaded it (16 bytes per parameter of the 54M model = 834 MiB, the 836 seen).

On CPU no allocator peak shows it (host and device are one memory), so this checks the order in the loop
that decides it: every move of the rollout arrangement comes before the reset that opens the rollout's
peak window. The estimate's terms for that case are checked in packages/contracts (memory.test.ts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_helpers import small_spec

from troupe import EventWriter, run_spec
import troupe.train as train_module  # the loop module (`from troupe import train` is the library call until it is imported)
from troupe.residency.manager import ResidencyManager


def _with_frozen_judge() -> dict:
    spec = small_spec(steps=2, offloadBetweenPhases=True)
    judge = {"name": "judge", "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": False}
    spec["actors"].append(judge)
    return spec


def test_the_rollout_peak_window_opens_after_the_rollout_arrangement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    timeline: list[tuple[str, str]] = []
    reset, report, move_all = train_module.reset_memory_peaks, train_module.report_memory, ResidencyManager._move_all

    def spy_reset(device):
        timeline.append(("reset", ""))
        return reset(device)

    def spy_report(events, step, phase, device, actor=None):
        timeline.append(("report", phase))
        return report(events, step, phase, device, actor)

    def spy_move(self, moves, direction, phase):
        if moves:
            timeline.append((direction, phase))
        return move_all(self, moves, direction, phase)

    monkeypatch.setattr(train_module, "reset_memory_peaks", spy_reset)
    monkeypatch.setattr(train_module, "report_memory", spy_report)
    monkeypatch.setattr(ResidencyManager, "_move_all", spy_move)
    result = run_spec(_with_frozen_judge(), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message

    rollout_reports = [i for i, (kind, phase) in enumerate(timeline) if kind == "report" and phase == "rollout"]
    assert len(rollout_reports) == 2
    # Step 2's rollout follows step 1's update: the student's optimizer state goes to the host first.
    second = rollout_reports[1]
    moves = [i for i, (kind, phase) in enumerate(timeline[:second]) if kind in ("offload", "reload") and phase == "rollout"]
    assert moves, f"the rollout arrangement of step 2 moved nothing: {timeline}"
    last_move = moves[-1]
    assert ("reset", "") in timeline[last_move + 1 : second], f"no peak reset between the rollout's moves and its report: {timeline[last_move - 3 : second + 1]}"
