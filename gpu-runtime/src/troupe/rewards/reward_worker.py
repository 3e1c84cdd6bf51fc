"""Runs spec-supplied Python reward code, long-lived, inside the sandbox (started by `python_rewards.py`).

Standalone on purpose (stdlib only, run with `python -I <this file>`): it never imports torch or
troupe. JSON lines on stdin/stdout:

    setup (first line):  {"code", "entrypoint", "timeoutSeconds", "memoryMb", "outputBytes", "reapStrays"}
    -> {"ready": true, "batched": bool} | {"error": "traceback text"} (then it exits)
    request:             {"id": n, "calls": [{...kwargs}, ...]}
    -> one line per call, in order: {"id": n, "i": index, "score": float | "error": text, "seconds", "cpu"}

Nothing this process says is trusted: the trainer checks every line (python_rewards.py). The limits
that matter are enforced outside it (rlimits set before it starts, the trainer's deadlines and
output caps, the sandbox); the ones here only turn a common mistake into a clear per-call error:
`timeoutSeconds` per call (SIGALRM), `memoryMb` more address space than at start-up (a soft
RLIMIT_AS under the sandbox's hard one), `outputBytes` printed per call (the rest is dropped).
After each call every other process in the sandbox is killed, so nothing a call started runs on.
"""

import io
import json
import math
import os
import resource
import signal
import sys
import time
import traceback

SCORE_LIMIT = 1e6  # the trainer enforces the same bound; checked here too for a clearer message
MAX_ERROR_CHARS = 4000


class CallTimeout(Exception):
    pass


class OutputLimit(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise CallTimeout("the reward call exceeded its time limit")


def batched(fn):
    """Decorator: the function takes lists (one entry per call) and returns a list of scores."""
    fn.batched = True
    return fn


class _CappedOutput(io.TextIOBase):
    """sys.stdout / sys.stderr for user code: goes to fd 2 up to `budget` bytes per call, then raises."""

    def __init__(self, budget):
        self.budget = budget
        self.used = 0

    def writable(self):
        return True

    def write(self, text):
        data = str(text).encode("utf-8", "replace")
        self.used += len(data)
        if self.used > self.budget:
            raise OutputLimit(f"the reward printed more than {self.budget:,} bytes in one call (the rest was dropped)")
        view = memoryview(data)
        while view:
            view = view[os.write(2, view):]
        return len(text)


def _vm_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _score(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"the reward returned {type(value).__name__} {value!r:.200}, not a number")
    score = float(value)
    if not math.isfinite(score):
        raise ValueError(f"the reward returned {value!r}, which is not a finite number")
    if abs(score) > SCORE_LIMIT:
        raise ValueError(f"the reward returned {score:g}, outside the accepted range [-{SCORE_LIMIT:g}, {SCORE_LIMIT:g}]")
    return score


def _in_own_pid_namespace():
    """True only under bubblewrap: our parent is pid 1 of a namespace and it is bwrap's init."""
    try:
        with open("/proc/1/comm") as f:
            return os.getppid() == 1 and f.read().strip() == "bwrap"
    except OSError:
        return False


class Worker:
    def __init__(self, setup, answers):
        self.answers = answers
        self.main_pid = os.getpid()
        self.timeout = float(setup["timeoutSeconds"])
        self.output = _CappedOutput(int(setup["outputBytes"]))
        self.reap = bool(setup.get("reapStrays")) and _in_own_pid_namespace()
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        soft = _vm_bytes() + int(setup["memoryMb"]) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
        signal.signal(signal.SIGALRM, _alarm)
        sys.stdout = sys.stderr = self.output

    def guarded(self, fn, *args, **kwargs):
        """fn(...) with the call's time limit and output budget; returns (value, error text)."""
        self.output.used = 0
        try:
            signal.setitimer(signal.ITIMER_REAL, self.timeout)
            value = fn(*args, **kwargs)
            signal.setitimer(signal.ITIMER_REAL, 0)
            if self.output.used > self.output.budget:
                raise OutputLimit(f"the reward printed more than {self.output.budget:,} bytes in one call (the rest was dropped)")
            return value, None
        except BaseException:  # noqa: BLE001 - every failure of user code is reported, never raised
            signal.setitimer(signal.ITIMER_REAL, 0)
            return None, traceback.format_exc()[-MAX_ERROR_CHARS:]
        finally:
            self.after_call()

    def after_call(self):
        if os.getpid() != self.main_pid:
            os._exit(0)  # a process forked by user code that returned into this loop: it must not answer
        if self.reap:
            try:
                os.kill(-1, signal.SIGKILL)  # every process of this sandbox but us and its init
            except ProcessLookupError:
                pass
        _reap_exited_children(5.0 if self.reap else 0.0)  # killed children must not stay zombies (task limit)

    def answer(self, message):
        self.answers.write(json.dumps(message) + "\n")
        self.answers.flush()

    def result(self, request_id, index, value, error, seconds):
        line = {"id": request_id, "i": index, "seconds": seconds, "cpu": _cpu_seconds()}
        if error is None:
            try:
                line["score"] = _score(value)
            except (TypeError, ValueError) as e:
                error = str(e)
        if error is not None:
            line["error"] = error
        self.answer(line)

    def serve(self, fn, requests):
        for raw in requests:
            request = json.loads(raw)
            request_id, calls = request["id"], request["calls"]
            if getattr(fn, "batched", False):
                keys = sorted({k for c in calls for k in c})
                started = time.perf_counter()
                scores, error = self.guarded(lambda: list(fn(**{k: [c.get(k) for c in calls] for k in keys})))
                share = (time.perf_counter() - started) / max(1, len(calls))  # each call is charged its share
                if error is None and len(scores) != len(calls):
                    error = f"a batched reward returned {len(scores)} scores for {len(calls)} calls"
                for i in range(len(calls)):
                    self.result(request_id, i, None if error else scores[i], error, share)
            else:
                for i, call in enumerate(calls):
                    started = time.perf_counter()
                    value, error = self.guarded(fn, **call)
                    self.result(request_id, i, value, error, time.perf_counter() - started)


def _reap_exited_children(wait_seconds):
    """Collects every exited child (a zombie counts against the sandbox's task limit for the worker's whole
    life), waiting up to `wait_seconds` for children just sent SIGKILL to die."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no child left
        if pid == 0:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)


def main():
    # Answers go to a private copy of fd 1; fd 1 itself then points at stderr, so prints, child
    # processes and stray writes cannot land on the answer channel by accident.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    requests = sys.stdin
    setup = json.loads(requests.readline())
    worker = Worker(setup, answers)
    namespace = {"__name__": "troupe_reward", "batched": batched}

    def load():
        exec(compile(setup["code"], "<reward code>", "exec"), namespace)
        fn = namespace.get(setup["entrypoint"])
        if not callable(fn):
            raise NameError(f'the code defines no function "{setup["entrypoint"]}"')
        return fn

    fn, error = worker.guarded(load)
    if error is not None:
        worker.answer({"error": error})
        return
    worker.answer({"ready": True, "batched": bool(getattr(fn, "batched", False))})
    worker.serve(fn, requests)


if __name__ == "__main__":
    main()
