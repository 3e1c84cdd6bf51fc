"""Training engines on a real GPU (marker `gpu`; scripts/gpu-check.sh runs them). Skipped, with the reason,
where CUDA is absent: no machine of this workplace's CI has one."""

import copy

import pytest
import torch
from runtime_helpers import small_spec

from troupe import EventWriter, run_spec
from troupe.engines.train import BackendSettings, build_backend
from troupe.launch.distributed import SINGLE
from troupe.models.loading import build_tiny
from troupe.residency.manager import Resident, ResidencyManager

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: torch.cuda.is_available() is false")]


def _training(**overrides):
    training = copy.deepcopy(small_spec()["actors"][0]["training"])
    training.update({"backend": "torch", "precision": "fp32", "optimizer": "adamw", "learningRate": 1e-3, "weightDecay": 0.0,
                     "betas": [0.9, 0.999], "offload": {"params": False, "optimizer": False}, **overrides})
    return training


def test_bf16_step_on_cuda(tmp_path):
    spec = small_spec(steps=2, device="cuda")
    spec["actors"][0]["training"]["precision"] = "bf16"
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    assert all(torch.isfinite(torch.tensor(result.metrics("loss"))))
    assert any("bf16" in e["message"] for e in result.events if e["type"] == "log")


def test_offload_frees_device_memory_and_the_books_match_cuda():
    device = torch.device("cuda", 0)
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated(device)
    loaded = build_tiny("tiny-char-4l")
    loaded.model.to(device)
    backend = build_backend(loaded.model, BackendSettings("a", _training(), device, SINGLE))
    loaded.model(torch.tensor([[1, 2, 3]], device=device)).logits.sum().backward()
    backend.step()
    backend.zero_grad()
    manager = ResidencyManager(between_phases=True)
    manager.add(Resident("a", device, backend=backend))
    manager.for_update("a")
    before = torch.cuda.memory_allocated(device) - base
    assert manager.resident_bytes() == pytest.approx(before, rel=0.05), (manager.resident_bytes(), before)
    manager.for_rollout([])
    after = torch.cuda.memory_allocated(device) - base
    print(f"device memory: {before:,} bytes before offload, {after:,} after ({after / before:.1%})")
    assert after < 0.10 * before
    assert manager.resident_bytes() == 0
    assert all(p.is_pinned() for p in loaded.model.parameters())  # host copies are pinned for fast reloads
    manager.for_update("a")
    assert torch.cuda.memory_allocated(device) - base == pytest.approx(before, rel=0.05)


def test_two_actors_share_one_gpu_with_offload_by_default(tmp_path):
    spec = small_spec(steps=2, device="cuda")
    second = copy.deepcopy(spec["actors"][0])
    second["name"] = "rival"
    spec["actors"].append(second)
    env = copy.deepcopy(spec["environments"][0])
    env["name"], env["actors"] = "echo2", ["rival"]
    spec["environments"].append(env)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    assert any("offloading between phases" in e["message"] for e in result.events if e["type"] == "log")
    moves = [e for e in result.events if e["type"] == "offload"]
    assert {e["actor"] for e in moves} == {"student", "rival"}
    assert all(e["bytes"] > 0 for e in moves)
