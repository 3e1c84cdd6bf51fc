"""The control channel: pause, resume and stop-after-step, acting at step boundaries.

Commands are JSON lines `{"command": "pause" | "resume" | "stop_after_step"}` (contracts
`RuntimeControlCommand`, checked against its exported JSON Schema). They come from an inherited
file descriptor (`--control-fd`, what the runner uses) or from a file or FIFO that is followed
like `tail -f` (`--control-file`, for use by hand: `echo '{"command":"pause"}' >> control.jsonl`).
A reader thread only records what was asked; the training loop acts on it between steps, so a
step is never cut in half.

At a step boundary (`step_boundary`, below) the loop goes on, pauses, stops after the step, is cancelled, or
ends because `maxDurationSeconds` would be exceeded. With several ranks rank 0 decides (it holds the control
channel and the clock) and every rank follows its decision; a SIGTERM that reached any rank cancels all.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TextIO

from jsonschema import Draft202012Validator

from .events import EventWriter
from .spec.schema import load_schema

if TYPE_CHECKING:  # torch: the control channel is read by the CLI's process before any rank exists
    from .launch.distributed import RankContext

CONTROL_SCHEMA_FILE = "runtime-control.v1.schema.json"
_POLL_SECONDS = 0.1  # how often a followed file is re-read at its end, and a pause re-checks a stop


class RunControl:
    """What the loop has been asked to do. Thread-safe; `wait_while_paused` blocks the loop."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._paused = False
        self._stop_after_step = False
        self.rejected: list[str] = []  # malformed lines, reported by the loop as warnings

    def apply(self, command: str) -> None:
        with self._cond:
            if command == "pause":
                self._paused = True
            elif command == "resume":
                self._paused = False
            elif command == "stop_after_step":
                self._stop_after_step = True
                self._paused = False  # a paused run that is told to stop ends now, at its boundary
            self._cond.notify_all()

    def handle_line(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        problem = command_problem(line)
        if problem:
            with self._cond:
                self.rejected.append(problem)
            return
        self.apply(json.loads(line)["command"])

    @property
    def paused(self) -> bool:
        with self._cond:
            return self._paused

    @property
    def stop_requested(self) -> bool:
        with self._cond:
            return self._stop_after_step

    def take_rejected(self) -> list[str]:
        with self._cond:
            out, self.rejected = self.rejected, []
            return out

    def wait_while_paused(self, cancelled: Callable[[], bool], timeout: float | None = None) -> None:
        """Returns once resumed, told to stop after the step, or `cancelled()` (e.g. SIGTERM), or after
        `timeout` seconds (the distributed loop wakes the other ranks now and then while paused)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._paused and not self._stop_after_step and not cancelled():
                if deadline is not None and time.monotonic() >= deadline:
                    return
                self._cond.wait(timeout=_POLL_SECONDS)


def command_problem(line: str) -> str | None:
    """Why a control line is not a valid command (None when it is), naming the field."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as e:
        return f"control line is not JSON (column {e.colno}): {line[:200]}"
    errors = sorted(_validator().iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = ".".join(str(p) for p in error.absolute_path) or "command"
    return f"control line rejected at {where}: {error.message}"


_VALIDATOR: Draft202012Validator | None = None


def _validator() -> Draft202012Validator:
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = Draft202012Validator(load_schema(CONTROL_SCHEMA_FILE))
    return _VALIDATOR


def follow_stream(stream: TextIO, control: RunControl) -> threading.Thread:
    """Reads lines from a pipe until it closes (the runner's fd): one command per line."""

    def read() -> None:
        for line in stream:
            control.handle_line(line)

    thread = threading.Thread(target=read, name="troupe-control", daemon=True)
    thread.start()
    return thread


def follow_file(path: Path, control: RunControl) -> threading.Thread:
    """Follows a regular file or a FIFO from its start, like `tail -f`; it need not exist yet.
    Use a fresh file per run: commands already in it are applied at start."""

    def read() -> None:
        while not path.exists():
            time.sleep(_POLL_SECONDS)
        # Opening a FIFO blocks until a writer opens it; a regular file opens at once.
        with path.open("r", encoding="utf-8") as f:
            pending = ""
            while True:
                chunk = f.readline()
                if not chunk:
                    time.sleep(_POLL_SECONDS)  # end of file (or no writer on the FIFO): wait for more
                    continue
                pending += chunk
                if pending.endswith("\n"):
                    control.handle_line(pending)
                    pending = ""

    thread = threading.Thread(target=read, name="troupe-control-file", daemon=True)
    thread.start()
    return thread


# While paused, rank 0 wakes the other ranks this often (a collective that waited longer would time out).
PAUSE_TICK_SECONDS = 2.0


@dataclass
class Boundary:
    action: str  # "train" | "stop" | "cancel" | "limit"
    message: str = ""
    paused_seconds: float = 0.0


def step_boundary(
    step: int,
    total_steps: int,
    ctx: RankContext,
    events: EventWriter,
    control: RunControl | None,
    stop: Any,
    over_limit: Callable[[float], str | None],
) -> Boundary:
    """`over_limit(paused_seconds)` returns the message when maxDurationSeconds would be exceeded."""
    cancelled: Callable[[], bool] = (lambda: stop.is_set()) if stop is not None else (lambda: False)
    paused_seconds = 0.0
    if control is not None:
        for problem in control.take_rejected():
            events.log("warning", problem)
    announced = False
    while True:
        pausing = control is not None and control.paused and not control.stop_requested and not cancelled()
        if not ctx.broadcast_object(pausing):
            break
        if not announced:
            events.status("paused", f"paused after step {step - 1} of {total_steps}")
            announced = True
        began = time.monotonic()
        if control is not None:
            control.wait_while_paused(cancelled, timeout=PAUSE_TICK_SECONDS if ctx.distributed else None)
        else:  # not rank 0: rank 0 wakes us with its next decision
            pass
        paused_seconds += time.monotonic() - began  # a pause does not count against maxDurationSeconds
    paused_seconds = ctx.broadcast_object(paused_seconds)
    stop_requested = ctx.broadcast_object(control is not None and control.stop_requested)
    is_cancelled = ctx.any(cancelled())
    if announced and not is_cancelled and not stop_requested:
        events.status("running", f"resumed at step {step} of {total_steps}")
    if stop_requested and not is_cancelled:
        return Boundary("stop", f"stopped after step {step - 1} of {total_steps} on request; checkpoint step-{step - 1} saved", paused_seconds)
    if is_cancelled:
        reason = getattr(stop, "reason", None) or "a stop request"
        return Boundary("cancel", f"cancelled by {reason} after step {step - 1} of {total_steps}", paused_seconds)
    limit_message = ctx.broadcast_object(over_limit(paused_seconds))
    if limit_message:
        return Boundary("limit", limit_message, paused_seconds)
    return Boundary("train", "", paused_seconds)
