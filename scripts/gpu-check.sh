#!/usr/bin/env bash
# Everything that needs a GPU, in one command, so a lent GPU machine needs nothing else:
# the GPU-marked runtime tests (bf16 steps, offload freeing device memory, two actors sharing one GPU,
# the residency books against torch.cuda.memory_allocated, the CUDA path, the memory estimate against
# measured CUDA peaks), the kernels' tests on CUDA,
# the training-engines benchmark, and bench/runtime/gpu_scale.py, whose table of ratios to the measured
# limits (HBM bandwidth, bf16 matmul, pinned copy) ends the output. Uses the machine's own torch/transformers (never installs them);
# pure-Python wheels it lacks (jsonschema, ...) may travel in .whl/ (see README "GPU check").
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${TROUPE_PYTHON:-python3}
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/troupe-site .whl/*.whl
  export PYTHONPATH="/tmp/troupe-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD/gpu-runtime/src:$PWD/kernels/src${PYTHONPATH:+:$PYTHONPATH}"
"$PY" - <<'PY'
import sys, torch
if not torch.cuda.is_available():
    sys.exit("gpu-check: CUDA is not available here (torch.cuda.is_available() is false)")
print(f"gpu-check: torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}")
for name in ("transformers", "vllm", "deepspeed", "liger_kernel", "flash_attn", "peft", "ray", "triton"):
    try:
        module = __import__(name)
        print(f"gpu-check: {name} {getattr(module, '__version__', '?')}")
    except Exception as e:  # noqa: BLE001
        print(f"gpu-check: {name} absent ({type(e).__name__})")
PY
status=0
(cd gpu-runtime && "$PY" -m pytest -q -rs -p no:cacheprovider tests/test_gpu_engines.py tests/test_cuda.py tests/test_deepspeed_backend.py tests/test_memory_estimate.py::test_estimate_matches_measured_cuda_memory tests/test_vllm_gpu.py tests/test_static_decode.py tests/test_host_buffers.py tests/test_head_operands.py) || status=1
(cd kernels && "$PY" -m pytest -q -rs -p no:cacheprovider tests) || status=1
"$PY" bench/runtime/engines.py --steps 4 || status=1
# Last, so the output ends with its one table: Troupe's paths against the limits measured in the same run (#25).
"$PY" bench/runtime/gpu_scale.py --json "${TROUPE_GPU_SCALE_JSON:-/tmp/troupe-gpu-scale.json}" || status=1
exit $status
