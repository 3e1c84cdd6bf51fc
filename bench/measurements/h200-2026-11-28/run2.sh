#!/usr/bin/env bash
# Second device call: what the first did not reach (its GPU tests ran out of time), the fixed engines bench,
# the offload section with the loop's pinned host buffers, and a profile of one update step.
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
PT="python3 -m pytest -q -rs -p no:cacheprovider --durations=8"
part 5-offload-profile 80 python3 bench/runtime/gpu_scale.py --shapes qwen2.5-0.5b --skip rollout,logprobs --profile
part 6a-memory-estimate 70 bash -c "cd gpu-runtime && $PT tests/test_memory_estimate.py::test_estimate_matches_measured_cuda_memory"
part 6b-static-host 70 bash -c "cd gpu-runtime && $PT tests/test_static_decode.py tests/test_host_buffers.py"
part 6c-kernels 45 bash -c "cd kernels && $PT tests"
part 7-engines 45 python3 bench/runtime/engines.py --steps 3
