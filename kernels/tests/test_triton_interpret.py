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


def test_kernels_trace_under_triton_3_6_scalar_conversion():
    # The first H200 run (triton 3.6, NumPy 2.5) failed here with "only 0-dimensional arrays can be
    # converted to Python scalars": the vocabulary and hidden sizes were runtime scalars used as
    # `range` bounds. The child reproduces 3.6's conversion on this machine's triton.
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    script = Path(__file__).with_name("_triton_interp_check.py")
    proc = subprocess.run([sys.executable, str(script), "--as-triton-3.6"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checks passed" in proc.stdout


def test_float32_dots_follow_torchs_tf32_flag():
    # Triton's default float32 dot on NVIDIA is TF32; torch's matmul is full float32 unless told
    # otherwise. The first H200 run's backward differed from the torch path by 3e-4 because only the
    # Triton side used TF32. The interpreter computes exact float32 whatever the flag, so this is
    # checked at the seam: the precision handed to the kernels.
    import torch

    from troupe_kernels.triton_logprobs import f32_dot_precision

    before = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        assert f32_dot_precision(torch.float32) == "ieee"
        torch.backends.cuda.matmul.allow_tf32 = True
        assert f32_dot_precision(torch.float32) == "tf32"
        assert f32_dot_precision(torch.bfloat16) == "tf32"  # 16-bit tiles: Triton's default, unchanged
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def test_every_kernel_dot_passes_the_precision():
    # A `tl.dot` without `input_precision` would silently fall back to TF32 on float32 inputs.
    import ast

    from troupe_kernels import triton_logprobs

    tree = ast.parse(Path(triton_logprobs.__file__).read_text())
    dots = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.dot"]
    assert len(dots) == 4
    assert all(any(k.arg == "input_precision" for k in d.keywords) for d in dots)


def test_forcing_triton_without_cuda_or_interpreter_explains_why():
    import torch

    from troupe_kernels import token_logprobs

    if torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("triton can run here, so forcing it is not an error")
    with pytest.raises(RuntimeError, match="triton"):
        token_logprobs(torch.randn(2, 4), torch.randn(5, 4), torch.tensor([0, 1]), backend="triton")
