"""Run events out: one JSON object per line (contracts `RunEvent`), flushed as soon as it is written.

Each event gets the next `seq` (starting at `--seq-start`) and `ts` (ms since the epoch). The
runner reads the lines live, so every line is flushed; the JSON is strict (no NaN/Infinity,
which JavaScript's JSON.parse rejects): non-finite metric values are dropped and said so once.
"""

from __future__ import annotations

import json
import math
import sys
import time
from typing import Any, Callable, Protocol, TextIO

# Limits from packages/contracts/src/events.ts; longer text is cut (keeping the end of tracebacks).
_MAX_STATUS_MESSAGE = 10_000
_MAX_MESSAGE = 100_000
_MAX_TRACEBACK = 200_000
_MAX_NAME = 64
TERMINAL_STATES = ("succeeded", "failed", "cancelled", "stopped")


def _cut(text: str, limit: int, keep_end: bool = False) -> str:
    if len(text) <= limit:
        return text
    marker = "…[cut]…"
    room = limit - len(marker)
    return marker + text[-room:] if keep_end else text[:room] + marker


class EventWatcher(Protocol):
    """Sees every event as it is written (the health advisories watch metrics and episodes this way)."""

    def seen(self, event: dict[str, Any]) -> None: ...

    def non_finite(self, step: int, actor: str | None, names: list[str]) -> None:
        """Metric names whose values were NaN/inf at a step (dropped from the event itself)."""
        ...


class EventWriter:
    """Writes events to a text stream (a file, a pipe fd, stdout) and/or keeps them in memory."""

    def __init__(
        self,
        stream: TextIO | None = None,
        seq_start: int = 1,
        keep: bool = False,
        echo: Callable[[str], None] | None = None,
    ):
        if seq_start < 1:
            raise ValueError("seq starts at 1")
        self.stream = stream
        self.next_seq = seq_start
        self.events: list[dict[str, Any]] | None = [] if keep else None
        self.echo = echo
        self._warned_nonfinite: set[str] = set()
        self.terminal_written = False
        # See every event written or relayed: the health advisories (advisories/), the trackers (trackers/).
        self.watchers: list[EventWatcher] = []

    def watch(self, watcher: EventWatcher) -> None:
        self.watchers.append(watcher)

    def notify(self, event: dict[str, Any]) -> None:
        """Hands an event to every watcher (also one a supervisor relays from rank 0, launch/ranks.py)."""
        for watcher in list(self.watchers):
            watcher.seen(event)

    def emit(self, type_: str, **fields: Any) -> dict[str, Any]:
        if self.terminal_written:
            raise RuntimeError("no event may follow the terminal status event")
        event = {"seq": self.next_seq, "ts": int(time.time() * 1000), "type": type_}
        event.update({k: v for k, v in fields.items() if v is not None})
        line = json.dumps(event, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        if self.stream is not None:
            self.stream.write(line + "\n")
            self.stream.flush()
        self.next_seq += 1
        if self.events is not None:
            self.events.append(event)
        self.notify(event)
        return event

    # One method per event type, mirroring the contracts.

    def status(self, state: str, message: str | None = None) -> dict[str, Any]:
        event = self.emit("status", state=state, message=_cut(message, _MAX_STATUS_MESSAGE) if message else None)
        if state in TERMINAL_STATES:
            self.terminal_written = True
        return event

    def metric(self, step: int, values: dict[str, float], actor: str | None = None) -> dict[str, Any] | None:
        clean, dropped = {}, []
        for name, value in values.items():
            v = float(value)
            if math.isfinite(v):
                clean[name] = v
                continue
            dropped.append(name)
            if name not in self._warned_nonfinite:
                self._warned_nonfinite.add(name)
                self.log("warning", f"metric {name} was {v} at step {step}; non-finite values are not reported")
        if dropped:
            for watcher in self.watchers:
                watcher.non_finite(step, actor, dropped)
        return self.emit("metric", step=step, actor=actor, values=clean)

    def memory(self, step: int, phase: str, device: str, actor: str | None = None, **byte_counts: float) -> dict[str, Any]:
        return self.emit("memory", step=step, phase=phase, device=device, actor=actor, **byte_counts)

    def episode(self, **fields: Any) -> dict[str, Any]:
        return self.emit("episode", **fields)

    def log(self, level: str, message: str) -> dict[str, Any]:
        if self.echo is not None:
            self.echo(f"[{level}] {message}")
        return self.emit("log", level=level, message=_cut(message, _MAX_MESSAGE))

    def checkpoint(self, step: int, path: str, actor: str | None = None, size_bytes: int | None = None) -> dict[str, Any]:
        return self.emit("checkpoint", step=step, path=path, actor=actor, sizeBytes=size_bytes)

    def checkpoint_pruned(self, step: int, path: str, keep_checkpoints: int) -> dict[str, Any]:
        """A checkpoint folder deleted by `trainer.keepCheckpoints`: the UI stops offering it for resume."""
        return self.emit("checkpoint_pruned", step=step, path=path, keepCheckpoints=keep_checkpoints)

    def offload(
        self, step: int, actor: str, direction: str, bytes: int, seconds: float, parts: list[str] | None = None, phase: str | None = None
    ) -> dict[str, Any]:
        """The residency manager moved an actor's state between the device and host memory (residency.py)."""
        return self.emit(
            "offload", step=step, actor=actor_name(actor), direction=direction, parts=parts, phase=phase, bytes=int(bytes), seconds=round(float(seconds), 6),
            gbPerSecond=round(bytes / seconds / 1e9, 3) if seconds > 0 else None,
        )

    def advisory(
        self, step: int, kind: str, severity: str, evidence: dict[str, Any], hint: str, actor: str | None = None
    ) -> dict[str, Any]:
        """A health advisory (troupe/advisories): a condition a researcher would want to know about, with
        the numbers, steps and transcripts that show it, and what to try."""
        return self.emit(
            "advisory", step=step, actor=actor_name(actor) if actor else None, kind=kind, severity=severity,
            evidence=evidence, hint=_cut(hint, 2000),
        )

    def error(self, message: str, field: str | None = None, traceback: str | None = None) -> dict[str, Any]:
        if self.echo is not None:
            self.echo(f"[error] {message}" + (f" (field {field})" if field else ""))
        return self.emit(
            "error",
            message=_cut(message, _MAX_MESSAGE),
            field=_cut(field, 512) if field else None,
            traceback=_cut(traceback, _MAX_TRACEBACK, keep_end=True) if traceback else None,
        )


def stderr_echo(line: str) -> None:
    """Human-readable log lines go to stderr (stdout may carry the events)."""
    print(line, file=sys.stderr, flush=True)


def actor_name(name: str) -> str:
    return name[:_MAX_NAME]
