"""bench/runtime/gpu_scale.py runs end to end here (issue #25): `--device cpu --tiny` goes through every section
(the limits, Troupe's HF engine against transformers' static-cache generate, a GRPO update through update_actor,
the token_logprobs kernel against the bare matmuls, two actors with between-phase offload) at toy sizes, so a
change that breaks the benchmark fails CI, not the next GPU loan. Its numbers mean nothing on a CPU: only that
each row exists with a finite value, and that the output ends with the one table."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_gpu_scale_tiny_cpu_run_fills_every_row_of_its_table(tmp_path: Path):
    out = tmp_path / "rows.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "runtime" / "gpu_scale.py"), "--device", "cpu", "--tiny", "--json", str(out)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads(out.read_text())
    sections = {r["section"].split(" ")[0] for r in rows}
    assert sections == {"limits", "rollout", "update", "logprobs", "offload"}, sections
    measures = [r["measure"] for r in rows]
    for wanted in ("memory bandwidth", "dense matmul bf16", "copy host->device", "Troupe HF engine, bf16 weights", "static-cache generate",
                   "MFU", "token_logprobs fwd+bwd bf16", "token_logprobs fwd+bwd fp32", "offload a", "reload"):
        assert any(wanted in m for m in measures), (wanted, measures)
    for r in rows:
        assert math.isfinite(r["value"]) and r["value"] > 0, r
        if r["limit"] is not None:
            assert math.isfinite(r["ratio"]) and r["ratio"] > 0, r
    # The output ends with the one table: its header, then a line per row.
    tail = proc.stdout.rstrip().splitlines()[-(len(rows) + 2):]
    assert tail[0].startswith("gpu_scale summary on CPU") and tail[1].split()[:3] == ["section", "measure", "value"], tail[:2]
    assert [line.split()[0] for line in tail[2:]] == [r["section"].split()[0] for r in rows]
