"""Runs spec-supplied Python reward code in its own process (started by `python_rewards.py`).

Standalone on purpose (stdlib only, run with `python -I <this file>`): it never imports torch or
troupe. Reads one JSON request on stdin, writes one JSON answer on stdout:

    request: {"code", "entrypoint", "scope", "timeoutSeconds", "memoryMb", "calls": [{...kwargs}]}
    answer:  {"results": [{"score": float, "seconds": float} | {"error": "traceback text", "seconds": float}]}

Limits: the address space may grow by `memoryMb` beyond this process's size at start-up
(RLIMIT_AS), and each call gets `timeoutSeconds` of wall time (SIGALRM). The parent kills the
whole process if it outlives the batch's budget. User output (print) goes to stderr.
"""

import json
import math
import resource
import signal
import sys
import time
import traceback


class CallTimeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise CallTimeout("the reward call exceeded its time limit")


def batched(fn):
    """Decorator: the function takes lists (one entry per call) and returns a list of scores."""
    fn.batched = True
    return fn


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _score(value):
    score = float(value)
    if not math.isfinite(score):
        raise ValueError(f"the reward returned {value!r}, which is not a finite number")
    return score


def main() -> None:
    out = sys.stdout
    request = json.loads(sys.stdin.read())
    sys.stdout = sys.stderr
    limit = _vm_bytes() + int(request["memoryMb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _alarm)
    timeout = float(request["timeoutSeconds"])
    calls = request["calls"]
    namespace = {"__name__": "troupe_reward", "batched": batched}
    results = []
    try:
        signal.setitimer(signal.ITIMER_REAL, timeout)
        exec(compile(request["code"], "<reward code>", "exec"), namespace)
        signal.setitimer(signal.ITIMER_REAL, 0)
        fn = namespace.get(request["entrypoint"])
        if not callable(fn):
            raise NameError(f'the code defines no function "{request["entrypoint"]}"')
    except BaseException:  # noqa: BLE001 - every failure of user code is reported, never raised
        signal.setitimer(signal.ITIMER_REAL, 0)
        error = traceback.format_exc()
        results = [{"error": error, "seconds": 0.0} for _ in calls]
    else:
        if getattr(fn, "batched", False):
            try:
                keys = sorted({k for c in calls for k in c})
                started = time.perf_counter()
                signal.setitimer(signal.ITIMER_REAL, timeout)
                scores = list(fn(**{k: [c.get(k) for c in calls] for k in keys}))
                signal.setitimer(signal.ITIMER_REAL, 0)
                if len(scores) != len(calls):
                    raise ValueError(f"a batched reward returned {len(scores)} scores for {len(calls)} calls")
                # One batch: each call is charged its share of the batch's time.
                share = (time.perf_counter() - started) / len(calls)
                results = [{"score": _score(s), "seconds": share} for s in scores]
            except BaseException:  # noqa: BLE001
                signal.setitimer(signal.ITIMER_REAL, 0)
                error = traceback.format_exc()
                results = [{"error": error, "seconds": 0.0} for _ in calls]
        else:
            for call in calls:
                started = time.perf_counter()
                try:
                    signal.setitimer(signal.ITIMER_REAL, timeout)
                    value = fn(**call)
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    results.append({"score": _score(value), "seconds": time.perf_counter() - started})
                except BaseException:  # noqa: BLE001
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    results.append({"error": traceback.format_exc(), "seconds": time.perf_counter() - started})
    out.write(json.dumps({"results": results}))
    out.flush()


if __name__ == "__main__":
    main()
