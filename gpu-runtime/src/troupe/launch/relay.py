"""What both rank supervisors share (the torchrun one in ranks.py, the Ray one in ray_ranks.py): writing an
event a rank numbered to the supervisor's own stream, and the control lines that bring rank 0 to the
supervisor's control state."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..events import EventWriter


def forward_event(writer: EventWriter, event: dict[str, Any], line: str | None = None) -> None:
    """Writes an event a rank numbered to the supervisor's stream as it is (same seq)."""
    line = line if line is not None else json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    if writer.stream is not None:
        writer.stream.write(line + "\n")
        writer.stream.flush()
    if writer.events is not None:
        writer.events.append(event)
    if writer.echo is not None and event["type"] == "log":
        writer.echo(f"[{event['level']}] {event['message']}")
    writer.next_seq = max(writer.next_seq, int(event["seq"]) + 1)
    writer.notify(event)


def control_commands(control: Any, sent: dict[str, bool]) -> list[str]:
    """The command lines that bring rank 0 to the supervisor's control state (`sent`: what rank 0 was told).
    Shared by the torchrun and Ray supervisors."""
    for problem in control.take_rejected():
        print(f"[warning] {problem}", file=sys.stderr, flush=True)  # rank 0 owns the event stream
    if control.stop_requested and not sent["stopping"]:
        sent["stopping"] = True
        return ['{"command":"stop_after_step"}']
    if control.paused != sent["paused"] and not sent["stopping"]:
        sent["paused"] = control.paused
        return ['{"command":"%s"}' % ("pause" if control.paused else "resume")]
    return []
