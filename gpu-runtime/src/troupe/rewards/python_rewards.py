"""Python rewards from the spec (`source.kind: "python"`), run in the sandbox (troupe.sandbox).

Contract (the same for library code and code written in the UI):
    completion scope:   reward(prompt, completion, **row) -> float
    conversation scope: reward(conversation, actor_name, **row) -> float
      conversation = [{"actor": "user", "content": prompt}, {"actor": "Alice", "content": ...}, ...]
A function decorated with `@batched` (provided in the code's namespace) gets lists instead,
one entry per call, and returns a list. Named arguments win over row columns of the same name.

Each reward has one long-lived worker (`reward_worker.py`) in a bubblewrap sandbox: an
unprivileged uid, no network, a private /tmp, the run's folder read-only and nothing else of the
host, a clean environment, `memoryMb` of extra address space, PROCESSES tasks, OUTPUT_BYTES
printed per call, `timeoutSeconds` per call (the worker's own alarm, and this side's deadline of
timeoutSeconds + DEADLINE_GRACE_SECONDS per answer, past which the whole sandbox is killed).

A score is accepted only when it is a finite number with |score| <= SCORE_LIMIT (1e6), checked
here whatever the worker claims. A call that raises, times out, prints too much, returns anything
else, dies with its worker or gets a malformed answer scores the reward's `failureScore`
(default 0) and is reported as a `log` event (level error) with the reward, the row and the
reason; the next call runs in a fresh worker when the old one broke. After `maxFailuresInARow`
failed calls in a row the run fails (RewardFailure, exit 1).
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ..sandbox import Limits, OFF, OFF_WARNING, Sandbox, SandboxError, SandboxExited, configured_mode
from ..sandbox.command import python_executable
from ..spec.runspec_types import Reward, RewardSourcePython

FAILED_SCORE = 0.0
MAX_FAILURES_IN_A_ROW = 32
SCORE_LIMIT = 1e6  # |score| above this (or not finite) is a failed call, whatever the worker says
STARTUP_ALLOWANCE_SECONDS = 10.0  # interpreter start and the code's imports, on top of timeoutSeconds
DEADLINE_GRACE_SECONDS = 2.0  # past the worker's own alarm before this side kills the sandbox
PROCESSES = 32  # tasks in one reward's sandbox: a fork loop stops there (memory: at most 32 x the AS limit)
OUTPUT_BYTES = 1_000_000  # printed per call; the worker drops the rest, this side kills past 2x per call
INTERPRETER_MB = 256  # address space for the interpreter itself, on top of memoryMb (hard limit)
WORKER_CPU_SECONDS = 3600  # CPU of one worker's life (RLIMIT_CPU); it is replaced at half of it
MAX_ANSWER_BYTES = 65536  # one answer line; tracebacks are cut to 4,000 characters by the worker
MAX_ERROR_CHARS = 4000
WORKER = Path(__file__).with_name("reward_worker.py")

Reporter = Callable[[str], None]


class RewardFailure(RuntimeError):
    """Too many failed calls in a row: the reward code is broken, the run stops."""


class ProtocolError(Exception):
    """The worker said something that is not a result of the call awaited."""


def _no_constants(name: str) -> float:
    raise ProtocolError(f"{name} is not a number JSON allows")


def checked_result(line: bytes, request_id: int, index: int) -> dict[str, Any]:
    """One answer line as {"score", "seconds"} or {"error", "seconds"}; ProtocolError when it is
    not an answer to call `index` of request `request_id`, or its score is not finite or out of range."""
    try:
        message = json.loads(line, parse_constant=_no_constants)
    except ProtocolError:
        raise
    except Exception as e:  # noqa: BLE001 - ValueError, RecursionError, UnicodeDecodeError...
        raise ProtocolError(f"not JSON ({type(e).__name__})") from e
    if not isinstance(message, dict) or message.get("id") != request_id or message.get("i") != index:
        raise ProtocolError(f"not the answer to call {index} of request {request_id}")
    seconds = message.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        seconds = 0.0
    if isinstance(message.get("error"), str) and "score" not in message:
        return {"error": message["error"][-MAX_ERROR_CHARS:], "seconds": float(seconds)}
    score = message.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or "error" in message:
        raise ProtocolError("neither a score nor an error")
    if not math.isfinite(score) or abs(score) > SCORE_LIMIT:
        # The worker reports such a return value as an error itself: on the wire it is a forgery.
        raise ProtocolError(f"a score of {score:g}, outside the accepted range [-{SCORE_LIMIT:g}, {SCORE_LIMIT:g}]")
    return {"score": float(score), "seconds": float(seconds), "cpu": message.get("cpu")}


class _Worker:
    """One sandboxed reward_worker.py: set up once, then asked call batches."""

    def __init__(self, reward: "PythonReward"):
        self.reward = reward
        self.requests = 0
        self.cpu = 0.0
        self.batched = False
        limits = Limits(memory_mb=reward.memory_mb + INTERPRETER_MB, cpu_seconds=WORKER_CPU_SECONDS, processes=reward.processes,
                        output_bytes=2 * reward.output_bytes)
        read_only = [WORKER]
        self.process = Sandbox(limits, run_dir=reward.run_dir, read_only=read_only).start([python_executable(), "-I", str(WORKER)])
        try:
            self._set_up()
        except BaseException:
            self.process.kill()  # now, not when the garbage collector gets to it
            raise

    def _set_up(self) -> None:
        reward = self.reward
        setup = {"code": reward.code, "entrypoint": reward.entrypoint, "timeoutSeconds": reward.timeout_seconds,
                 "memoryMb": reward.memory_mb, "outputBytes": reward.output_bytes, "reapStrays": configured_mode() != OFF}
        deadline = time.monotonic() + reward.timeout_seconds + STARTUP_ALLOWANCE_SECONDS
        self.process.write(json.dumps(setup).encode() + b"\n", deadline)
        line = self.process.read_line(deadline, MAX_ANSWER_BYTES)
        try:
            answer = json.loads(line, parse_constant=_no_constants)
        except Exception as e:  # noqa: BLE001
            raise ProtocolError("the reward worker's first line is not JSON") from e
        if isinstance(answer, dict) and isinstance(answer.get("error"), str):
            self.setup_error: str | None = answer["error"][-MAX_ERROR_CHARS:]
            self.process.kill()
        elif isinstance(answer, dict) and answer.get("ready") is True:
            self.setup_error = None
            # Only decides how many calls a broken worker takes down with it: safe to believe.
            self.batched = answer.get("batched") is True
        else:
            raise ProtocolError("the reward worker's first line is neither ready nor an error")

    def results(self, calls: list[dict[str, Any]]):
        """Yields one checked result per call, in order; raises SandboxError/ProtocolError (worker dead)."""
        self.requests += 1
        request_id = self.requests
        timeout = self.reward.timeout_seconds + DEADLINE_GRACE_SECONDS
        self.process.write(json.dumps({"id": request_id, "calls": calls}, default=str).encode() + b"\n", time.monotonic() + timeout)
        for i in range(len(calls)):
            result = checked_result(self.process.read_line(time.monotonic() + timeout, MAX_ANSWER_BYTES), request_id, i)
            if isinstance(result.get("cpu"), (int, float)) and not isinstance(result.get("cpu"), bool):
                self.cpu = max(self.cpu, float(result.pop("cpu")))
            result.pop("cpu", None)
            yield result

    def close(self) -> None:
        self.process.kill()


@dataclass
class PythonReward:
    name: str
    code: str
    entrypoint: str
    scope: str
    timeout_seconds: float
    memory_mb: int
    report: Reporter = field(default=lambda message: None)
    failures_in_a_row: int = 0
    failure_score: float = FAILED_SCORE  # the spec's failureScore
    max_failures_in_a_row: int = MAX_FAILURES_IN_A_ROW  # the spec's maxFailuresInARow
    fields: list[str] = field(default_factory=list)  # unknown until called: nothing checked up front
    run_dir: Path | None = None  # the run's folder: read-only inside the sandbox, the working folder
    # From the run's `sandbox` settings (shared with tools and code environments).
    processes: int = PROCESSES
    output_bytes: int = OUTPUT_BYTES
    _worker: _Worker | None = field(default=None, repr=False)
    _warned_unsandboxed: bool = field(default=False, repr=False)
    _worker_batched: bool = field(default=False, repr=False)

    def __call__(self, prompt: str, completion: str, row: Mapping[str, Any]) -> float:
        return self.score_many([{**row, "prompt": prompt, "completion": completion}], [row])[0]

    def score_conversation(self, conversation: list[dict[str, str]], actor_name: str, row: Mapping[str, Any]) -> float:
        return self.score_many([{**row, "conversation": conversation, "actor_name": actor_name}], [row])[0]

    def score_many(self, calls: list[dict[str, Any]], rows: list[Mapping[str, Any]]) -> list[float]:
        """Scores of `calls` (keyword arguments each); failures score failure_score and are reported."""
        if not calls:
            return []
        results = self._run(calls)
        scores = []
        for call_rows, result in zip(rows, results):
            if "score" in result:
                self.failures_in_a_row = 0
                scores.append(result["score"])
                continue
            self.failures_in_a_row += 1
            scores.append(self.failure_score)
            self.report(f'reward "{self.name}" failed on row {json.dumps(call_rows, default=str)[:2000]}; scored {self.failure_score:g}:\n{result["error"]}')
            if self.failures_in_a_row >= self.max_failures_in_a_row:
                self.close()
                raise RewardFailure(
                    f'reward "{self.name}" failed {self.failures_in_a_row} calls in a row; last error:\n{result["error"]}'
                )
        return scores

    def run_calls(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The checked answer per call (`score` or `error`, and `seconds`), nothing counted or
        reported: what the designer's Test button shows."""
        return self._run(calls)

    def close(self) -> None:
        """Stops the worker and everything in its sandbox (a later call starts a new one)."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def _start(self) -> _Worker:
        if configured_mode() == OFF and not self._warned_unsandboxed:
            self._warned_unsandboxed = True
            print(f"troupe: {OFF_WARNING}", file=sys.stderr)
            self.report(f'reward "{self.name}": {OFF_WARNING}')
        return _Worker(self)

    def _run(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        while len(results) < len(calls):
            remaining = calls[len(results):]
            started = time.monotonic()
            try:
                if self._worker is None or not self._worker.process.alive:
                    self.close()
                    self._worker = self._start()
                worker = self._worker
                self._worker_batched = worker.batched
                if worker.setup_error is not None:
                    self._worker = None  # the code itself is broken: every call fails with its error
                    results += [{"error": worker.setup_error, "seconds": 0.0} for _ in remaining]
                    break
                for result in worker.results(remaining):
                    results.append(result)
            except (SandboxError, ProtocolError, OSError) as e:
                self.close()
                reason = _failure_reason(e, self.timeout_seconds)
                # Per-call rewards: the call awaited fails, the rest go to a fresh worker.
                # A batched reward's one call covers all of them.
                failed = remaining if self._worker_batched else remaining[:1]
                results += [{"error": reason, "seconds": time.monotonic() - started} for _ in failed]
        worker = self._worker
        if worker is not None and (any("error" in r for r in results) or worker.cpu > WORKER_CPU_SECONDS / 2):
            self.close()  # a failed call may leave the worker's state bad; a long life, its CPU limit near
        return results[: len(calls)]


def _failure_reason(error: Exception, timeout_seconds: float) -> str:
    if isinstance(error, ProtocolError):
        return f"the reward worker answered something that is not a result ({error}); its sandbox was killed"
    message = str(error)
    if "time limit" in message:
        return f"the reward call ran past its time limit ({timeout_seconds:g}s + {DEADLINE_GRACE_SECONDS:g}s grace); its sandbox was killed"
    if isinstance(error, SandboxExited):
        return message.replace("the sandboxed process", "the reward worker", 1)
    return f"the reward worker failed: {message}"


def bind_python_reward(reward: Reward, run_dir: str | Path | None = None, sandbox: Mapping[str, Any] | None = None) -> PythonReward:
    """The reward's worker runs under the run's `sandbox` settings (processes, outputBytes per call); its
    memory is the reward's own `memoryMb` and its time `timeoutSeconds` per call."""
    source = reward.source
    assert isinstance(source, RewardSourcePython), f'reward "{reward.name}" is not a Python reward'
    settings = sandbox or {}
    return PythonReward(
        reward.name,
        source.code,
        source.entrypoint,
        reward.scope,
        float(reward.timeout_seconds),
        int(reward.memory_mb),
        failure_score=float(reward.failure_score),
        max_failures_in_a_row=int(reward.max_failures_in_arow),
        run_dir=Path(run_dir) if run_dir is not None else None,
        processes=int(settings.get("processes", PROCESSES)),
        output_bytes=int(settings.get("outputBytes", OUTPUT_BYTES)),
    )
