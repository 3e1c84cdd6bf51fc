#!/usr/bin/env bash
# One prepared device call: scripts/gpu-check.sh's parts, each under its own time limit so a slow part cannot
# take the others' numbers, the benchmark table first (the numbers #25 asks for), outputs into $OUT.
set -u
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/troupe-site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH="/tmp/troupe-site:$PWD/gpu-runtime/src:$PWD/kernels/src"
part() {
  local name=$1 limit=$2; shift 2
  local t=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t ))s (limit ${limit}s)" | tee -a "$OUT/summary.txt"
}
(date -u; nvidia-smi; python3 -c "import torch, transformers, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'triton', triton.__version__)"; git log -1 --format=%H 2>/dev/null) > "$OUT/0-env.txt" 2>&1
part 1-scale-0.5b 250 python3 bench/runtime/gpu_scale.py --shapes qwen2.5-0.5b --json "$OUT/scale-0.5b.json"
part 2-gpu-tests 165 bash -c 'cd gpu-runtime && python3 -m pytest -q -rs -p no:cacheprovider tests/test_gpu_engines.py tests/test_cuda.py tests/test_deepspeed_backend.py tests/test_memory_estimate.py::test_estimate_matches_measured_cuda_memory tests/test_vllm_gpu.py tests/test_static_decode.py tests/test_host_buffers.py; a=$?; cd ../kernels && python3 -m pytest -q -rs -p no:cacheprovider tests; b=$?; echo "runtime rc=$a kernels rc=$b"; exit $(( a || b ))'
part 3-engines 45 python3 bench/runtime/engines.py --steps 4
part 4-scale-1.5b 95 python3 bench/runtime/gpu_scale.py --shapes qwen2.5-1.5b --skip logprobs,offload --json "$OUT/scale-1.5b.json"
