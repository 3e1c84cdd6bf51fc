"""The control channel: pause, resume and stop-after-step, acting at step boundaries.

Commands are JSON lines `{"command": "pause" | "resume" | "stop_after_step"}` (contracts
`RuntimeControlCommand`, checked against its exported JSON Schema). They come from an inherited
file descriptor (`--control-fd`, what the runner uses) or from a file or FIFO that is followed
like `tail -f` (`--control-file`, for use by hand: `echo '{"command":"pause"}' >> control.jsonl`).
A reader thread only records what was asked; the training loop acts on it between steps, so a
step is never cut in half.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Callable, TextIO

from jsonschema import Draft202012Validator

from .spec.schema import load_schema

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
