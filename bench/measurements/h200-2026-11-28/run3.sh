#!/usr/bin/env bash
# Third device call: the head-dtype and gradient-slab fixes, measured (update + offload at 0.5B with a profile, update at 1.5B).
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
git log -1 --format=%H > "$OUT/commit.txt" 2>&1
part 8-update-offload-0.5b 75 python3 bench/runtime/gpu_scale.py --shapes qwen2.5-0.5b --skip rollout,logprobs --profile
part 9-update-1.5b 50 python3 bench/runtime/gpu_scale.py --shapes qwen2.5-1.5b --skip rollout,logprobs,offload
