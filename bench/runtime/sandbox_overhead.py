"""Per-call cost of the bubblewrap reward sandbox against the worker it replaced, same machine, same run.

    cd gpu-runtime && ../.venv/bin/python ../bench/runtime/sandbox_overhead.py [--steps 20] [--calls 16]

Old (commit 25c3f26): one unsandboxed `python -I reward_worker.py` process per reward per step,
one JSON request in, one answer out. New: one long-lived worker per reward in a bubblewrap
sandbox, one JSON line per call; its start-up (sandbox + interpreter) is paid once per run and
again only after a failed call. A trivial reward (`len(completion)`), so the numbers are the
machinery's cost, not the reward's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from troupe.rewards.python_rewards import PythonReward
from troupe.sandbox import sandbox_status

OLD_COMMIT = "25c3f26"
CODE = "def reward(prompt, completion, **row):\n    return len(completion)\n"
REPO = Path(__file__).resolve().parents[2]


def old_worker_file() -> Path:
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{OLD_COMMIT}:gpu-runtime/src/troupe/reward_worker.py"],
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="troupe-bench-")) / "old_reward_worker.py"
    path.write_text(source)
    return path


def old_step(worker: Path, calls: list[dict]) -> list[float]:
    request = {"code": CODE, "entrypoint": "reward", "scope": "completion", "timeoutSeconds": 5, "memoryMb": 256, "calls": calls}
    done = subprocess.run([sys.executable, "-I", str(worker)], input=json.dumps(request), capture_output=True, text=True,
                          timeout=60, start_new_session=True)
    return [r["score"] for r in json.loads(done.stdout)["results"]]


def timed(fn, steps: int) -> list[float]:
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--calls", type=int, default=16, help="calls per step (prompts x group size)")
    args = parser.parse_args()
    status = sandbox_status()
    if status.mode != "bwrap" or not status.usable:
        sys.exit(f"the sandbox is not usable here: {status.reason}")
    calls = [{"prompt": "say a:", "completion": "a" * i} for i in range(args.calls)]
    expected = [float(i) for i in range(args.calls)]

    worker = old_worker_file()
    try:
        assert old_step(worker, calls) == expected
        old = timed(lambda: old_step(worker, calls), args.steps)
    finally:
        shutil.rmtree(worker.parent, ignore_errors=True)

    reward = PythonReward("bench", CODE, "reward", "completion", 5.0, 256)
    started = time.perf_counter()
    assert reward.score_many(calls, calls) == expected
    cold = time.perf_counter() - started  # sandbox + interpreter start + the first step
    new = timed(lambda: reward.score_many(calls, calls), args.steps)
    reward.close()

    # The same long-lived worker without the sandbox: what isolation itself costs per call.
    os.environ["TROUPE_SANDBOX"] = "off"
    bare_reward = PythonReward("bench", CODE, "reward", "completion", 5.0, 256, report=lambda message: None)
    assert bare_reward.score_many(calls, calls) == expected
    bare = timed(lambda: bare_reward.score_many(calls, calls), args.steps)
    bare_reward.close()
    del os.environ["TROUPE_SANDBOX"]

    # A sandbox started per step (what a worker restarted after a failed call costs).
    def restart_step() -> None:
        r = PythonReward("bench", CODE, "reward", "completion", 5.0, 256)
        r.score_many(calls, calls)
        r.close()

    restarted = timed(restart_step, max(3, args.steps // 4))

    old_m, new_m, restart_m = statistics.median(old), statistics.median(new), statistics.median(restarted)
    print(f"machine: {os.cpu_count()} CPUs; {args.steps} steps x {args.calls} calls; medians")
    print(f"old worker (process per step, unsandboxed): {old_m * 1e3:8.1f} ms/step  {old_m / args.calls * 1e3:7.2f} ms/call")
    print(f"sandboxed long-lived worker:                {new_m * 1e3:8.1f} ms/step  {new_m / args.calls * 1e3:7.2f} ms/call"
          f"   (first step with start-up: {cold * 1e3:.0f} ms)")
    bare_m = statistics.median(bare)
    print(f"same long-lived worker, unsandboxed:        {bare_m * 1e3:8.1f} ms/step  {bare_m / args.calls * 1e3:7.2f} ms/call")
    print(f"sandbox started for the step (restart):     {restart_m * 1e3:8.1f} ms/step  {restart_m / args.calls * 1e3:7.2f} ms/call")
    print(f"ratio new/old per call, warm worker: {new_m / old_m:.3f}   restart every step: {restart_m / old_m:.2f}"
          f"   sandboxed/unsandboxed long-lived: {new_m / bare_m:.2f}")


if __name__ == "__main__":
    main()
