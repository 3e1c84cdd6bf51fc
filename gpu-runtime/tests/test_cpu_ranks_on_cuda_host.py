"""CPU ranks on a host whose torch has CUDA (issue #25): 2 fsdp2 ranks over gloo crashed on the H200 with
"index is on cpu, different from other tensors on cuda:0" because torch's default device mesh follows the
host's accelerator, and `trainer.device: "auto"` picked the GPU for ranks the spec put on CPU processes.

Stand-in for CUDA (none exists here): each rank process loads fixtures/cuda_seen/sitecustomize.py, which
makes torch report CUDA available and cuda as the accelerator. Anything that then really touches CUDA
raises (this torch build has none), and the rank code asserts every actor's parameters are on its device
(device_choice.assert_on_device), so the run succeeding on CPU is the assertion that nothing left it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from runtime_helpers import FIXTURES, small_spec

from troupe import EventWriter, run_spec
from troupe.launch import ranks as ranks_module

pytestmark = pytest.mark.slow


def test_cpu_ranks_stay_on_cpu_when_torch_sees_cuda_stand_in(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FIXTURES / "cuda_seen"), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TROUPE_TEST_CUDA_SEEN", "1")
    monkeypatch.setattr(ranks_module, "_has_cuda", lambda: True)  # the launcher's own view, the same stand-in
    spec = small_spec(steps=2, device="auto")
    spec["actors"][0]["training"]["backend"] = "fsdp2"
    spec["actors"][0]["placement"] = {"processes": 2}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    devices = [e["message"] for e in result.events if e["type"] == "log" and e["message"].startswith("device ")]
    assert devices and all(m.startswith("device cpu") for m in devices), devices
    launched = [e["message"] for e in result.events if e["type"] == "log" and e["message"].startswith("launching 2 ranks")]
    assert launched and "gloo" in launched[0], launched


def test_the_stand_in_really_makes_torch_see_cuda(tmp_path: Path):
    """Without this the test above could pass for want of a working stand-in."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(FIXTURES / "cuda_seen"), "TROUPE_TEST_CUDA_SEEN": "1"}
    code = "import torch; print(torch.cuda.is_available(), torch._C._get_accelerator().type)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["True", "cuda"]
