"""GPU numbering between runner and runtime (issue #25): `placement.gpus` is the runner's own numbering,
the process sees only its granted GPUs renumbered from 0 (CUDA_VISIBLE_DEVICES) and is told their host
numbers (TROUPE_GPU_IDS); without placements the local models spread over the visible GPUs.

No CUDA here: devices are torch.device objects (constructing one needs no GPU), and the visible GPU count
is a stand-in (torch.cuda.device_count patched), named so in the tests that need it."""

from __future__ import annotations

import copy

import pytest
import torch
from runtime_helpers import small_spec

from troupe.actors import actor_device
from troupe.spec.runspec_types import Actor as ActorSection
from troupe.launch.distributed import SINGLE, RankContext
from troupe.host.gpu_ids import granted_gpus_text, host_gpu_ids, local_index, spread_index, ungranted_gpus
from troupe.spec import validate_spec
from troupe.spec.support import support_issues

CUDA0 = torch.device("cuda", 0)


def _filled(spec: dict) -> dict:
    return validate_spec(spec)


def _one_actor(**placement) -> dict:
    spec = small_spec(steps=1, device="auto")
    if placement:
        spec["actors"][0]["placement"] = placement
    return _filled(spec)


def _two_actors() -> dict:
    spec = small_spec(steps=1, device="auto")
    rival = copy.deepcopy(spec["actors"][0])
    rival["name"] = "rival"
    spec["actors"].append(rival)
    return _filled(spec)


def test_host_ids_come_from_the_runner_and_map_to_cuda_order():
    assert host_gpu_ids({}) is None
    assert host_gpu_ids({"TROUPE_GPU_IDS": ""}) == []
    assert host_gpu_ids({"TROUPE_GPU_IDS": "3,1"}) == [3, 1]
    assert local_index(1, {"TROUPE_GPU_IDS": "3,1"}) == 1 and local_index(3, {"TROUPE_GPU_IDS": "3,1"}) == 0
    assert local_index(2, {}) == 2  # no runner: CUDA's own numbering, as before
    with pytest.raises(ValueError, match="GPU 0 was not granted"):
        local_index(0, {"TROUPE_GPU_IDS": "1"})
    with pytest.raises(ValueError, match="TROUPE_GPU_IDS"):
        host_gpu_ids({"TROUPE_GPU_IDS": "GPU-1a2b"})


def test_placement_on_the_runners_gpu_1_is_accepted_when_granted():
    # The process sees one GPU (the runner's GPU 1, renumbered 0): before #25 this was refused.
    assert ungranted_gpus([1], {"TROUPE_GPU_IDS": "1"}) == []
    assert ungranted_gpus([0, 1], {"TROUPE_GPU_IDS": "1"}) == [0]
    assert ungranted_gpus([5], {}) == []  # no runner: the count check applies instead
    assert granted_gpus_text({"TROUPE_GPU_IDS": ""}) == "none"


def test_support_check_takes_the_runners_numbering(monkeypatch):
    spec = _one_actor(gpus=[1])
    fields = lambda: [i.path for i in support_issues(spec, cuda_available=True, gpu_count=1)]  # noqa: E731
    monkeypatch.delenv("TROUPE_GPU_IDS", raising=False)
    assert "actors.0.placement.gpus" in fields()
    monkeypatch.setenv("TROUPE_GPU_IDS", "1")
    assert "actors.0.placement.gpus" not in fields()
    monkeypatch.setenv("TROUPE_GPU_IDS", "0")
    assert [str(i) for i in support_issues(spec, cuda_available=True, gpu_count=1) if i.path == "actors.0.placement.gpus"] == [
        "actors.0.placement.gpus: asks for GPU 1, but the runner granted this run GPU(s) 0 (indices are the runner's own)"
    ]


def test_a_placed_actor_runs_on_its_granted_gpu_renumbered(monkeypatch):
    monkeypatch.setenv("TROUPE_GPU_IDS", "1")
    spec = _one_actor(gpus=[1])
    assert actor_device(ActorSection.from_dict(spec["actors"][0]), CUDA0, SINGLE, spec) == torch.device("cuda", 0)
    monkeypatch.setenv("TROUPE_GPU_IDS", "0,1")
    assert actor_device(ActorSection.from_dict(spec["actors"][0]), CUDA0, SINGLE, spec) == torch.device("cuda", 1)


def test_unplaced_models_spread_one_per_visible_gpu_stand_in(monkeypatch):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)  # stand-in: a process that sees 2 GPUs
    spec = _two_actors()
    assert [actor_device(ActorSection.from_dict(a), CUDA0, SINGLE, spec) for a in spec["actors"]] == [torch.device("cuda", 0), torch.device("cuda", 1)]
    # One visible GPU: they share it (the run device), as before.
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert [actor_device(ActorSection.from_dict(a), CUDA0, SINGLE, spec) for a in spec["actors"]] == [CUDA0, CUDA0]
    # On the CPU nothing changes.
    cpu = torch.device("cpu")
    assert [actor_device(ActorSection.from_dict(a), cpu, SINGLE, spec) for a in spec["actors"]] == [cpu, cpu]
    # Ranks keep their own GPU each (the run device), not one per model.
    two_ranks = RankContext(rank=1, world_size=2, local_rank=1)
    assert actor_device(ActorSection.from_dict(spec["actors"][1]), torch.device("cuda", 1), two_ranks, spec) == torch.device("cuda", 1)


def test_lora_actors_on_one_base_count_once_and_api_actors_not_at_all():
    lora = {"rank": 4, "alpha": 8, "dropout": 0.0, "targetModules": ["q_proj", "v_proj"]}
    spec = _two_actors()
    for a in spec["actors"]:
        a["training"]["lora"] = lora
    spec["actors"].append({**copy.deepcopy(spec["actors"][0]), "name": "third", "model": {"source": "tiny", "preset": "tiny-char-4l"}})
    spec["actors"][2]["training"].pop("lora")
    assert [spread_index(spec, a["name"], 4) for a in spec["actors"]] == [0, None, 1]
    spec["actors"][1]["backend"] = "openai"
    assert spread_index(spec, "third", 4) == 1
