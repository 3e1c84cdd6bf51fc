"""The plain-torch path on CUDA. Skipped, with the reason, where CUDA is absent (the CPU build here)."""

import pytest
import torch
from runtime_helpers import check_protocol, small_spec

from troupe import run_spec

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: torch.cuda.is_available() is false")


@needs_cuda
def test_demo_steps_on_cuda_report_cuda_memory(tmp_path, events_validator):
    result = run_spec(small_spec(steps=2, device="cuda"), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    cuda = [e for e in result.events if e["type"] == "memory" and e["device"].startswith("cuda:")]
    assert {e["phase"] for e in cuda} >= {"rollout", "reward", "update"}
    assert all(e["allocatedBytes"] > 0 and e["peakBytes"] >= e["allocatedBytes"] for e in cuda)
    assert max(result.metrics("logprob_gap")) < 1e-3
