"""deploy/ray-spec.json (the spec deploy/kuberay and deploy/slurm run, #28 item 4) as the runtime reads it: valid,
aimed at an existing Ray cluster, and refused here only for what this host lacks (CUDA), never for a field.
The manifests themselves are checked in scripts/test/deployManifests.test.ts."""

import importlib.util
from pathlib import Path

import pytest

from troupe.spec import SpecError, check_supported, load_spec

SPEC = Path(__file__).resolve().parents[2] / "deploy" / "ray-spec.json"


def test_the_deploy_spec_is_valid_and_joins_the_cluster_it_runs_on():
    spec = load_spec(SPEC)
    assert spec["cluster"] == {"kind": "ray", "address": "auto", "strategy": "SPREAD"}
    assert spec["actors"][0]["placement"]["gpus"] == [0, 1]


def test_a_cuda_host_with_ray_would_run_it_and_this_one_says_why_not():
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is the cluster extra (pip install troupe[cluster]); without it the ray cluster kind is refused")
    spec = load_spec(SPEC)
    check_supported(spec, cuda_available=True)  # a node of one GPU, as each rank sees it: no issue at all
    local = {**spec, "cluster": {"kind": "local"}}
    with pytest.raises(SpecError, match="asks for GPU 1, but this host has 1"):
        check_supported(local, cuda_available=True)  # without Ray the indices are this host's GPUs
    with pytest.raises(SpecError) as refused:
        check_supported(spec, cuda_available=False)
    assert {i.path for i in refused.value.issues} == {"actors.0.placement.gpus", "trainer.device"}
