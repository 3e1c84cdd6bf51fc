"""What the loop does at a step boundary: go on, pause, stop after the step, be cancelled, or end because
`maxDurationSeconds` would be exceeded. With several ranks rank 0 decides (it holds the control channel
and the clock) and every rank follows its decision; a SIGTERM that reached any rank cancels all."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from .control import RunControl
from .distributed import RankContext
from .events import EventWriter

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
