"""The Triton kernel on CPU through Triton's interpreter (~100x slower: small shapes only)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import triton  # noqa: F401

    _REASON = None
except Exception as exc:  # noqa: BLE001
    _REASON = f"triton is not importable here ({type(exc).__name__}): pip install 'troupe-kernels[gpu]'"

pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


def test_triton_forward_and_backward_kernels_under_the_interpreter_match_float64():
    # A child process: TRITON_INTERPRET must be set before triton decorates the kernel, and this
    # process may be using real CUDA kernels.
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    script = Path(__file__).with_name("_triton_interp_check.py")
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checks passed" in proc.stdout


def test_forcing_triton_without_cuda_or_interpreter_explains_why():
    import torch

    from troupe_kernels import token_logprobs

    if torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("triton can run here, so forcing it is not an error")
    with pytest.raises(RuntimeError, match="triton"):
        token_logprobs(torch.randn(2, 4), torch.randn(5, 4), torch.tensor([0, 1]), backend="triton")
