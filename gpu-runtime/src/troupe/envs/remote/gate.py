"""Back-pressure and session deadlines for the remote client (issue #28, item 3).

A step of 10,000 episodes calls 10,000 sessions at once; without a gate every call opens its own
connection (or waits inside aiohttp's pool, where its timeout already runs). `SessionGate` sits on the
client's event loop in front of every call:

- at most `max_concurrent` sessions have a call in flight (an `asyncio.Semaphore`); the rest wait their
  turn in the runner, and a call's `timeoutSeconds` starts only when it leaves the queue, so queueing
  never fails a healthy episode;
- each session has a budget of `session_timeout_s` seconds of calls in all (from leaving the queue to the
  reply, summed over its reset and steps; the model's turns in between do not count). A call gets what is
  left of it as its deadline; a session past it fails with kind "timeout", as any other timeout does
  (environment.py's failure policy: it trains nothing and scores `failureScore`).

The gate counts what it sees (`in_flight`, `peak_in_flight`, `queued_peak`) for tests and benchmarks.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, TypeVar

from .protocol import RemoteFailure

T = TypeVar("T")

DEFAULT_MAX_CONCURRENT = 256


@dataclass(frozen=True)
class SessionLimits:
    """The spec's `remote.maxConcurrentSessions` and `remote.sessionTimeoutSeconds` (None: no budget)."""

    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    session_timeout_s: float | None = None

    def __post_init__(self) -> None:
        if self.max_concurrent < 1:
            raise ValueError(f"maxConcurrentSessions: must be at least 1, got {self.max_concurrent}")
        if self.session_timeout_s is not None and self.session_timeout_s <= 0:
            raise ValueError(f"sessionTimeoutSeconds: must be positive, got {self.session_timeout_s}")


class SessionGate:
    """Used on one event loop only (the client's); the semaphore is made there at first use."""

    def __init__(self, limits: SessionLimits) -> None:
        self.limits = limits
        self._slots: asyncio.Semaphore | None = None
        self._spent: dict[str, float] = {}  # session -> seconds of calls so far (budgeted sessions only)
        self.in_flight = 0
        self.peak_in_flight = 0
        self.waiting = 0
        self.queued_peak = 0

    def forget(self, session: str) -> None:
        """The session ended (done or failed): drop its budget."""
        self._spent.pop(session, None)

    async def call(self, session: str | None, post: Callable[[], Awaitable[T]], route: str, transport: str) -> T:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limits.max_concurrent)
        self.waiting += 1
        self.queued_peak = max(self.queued_peak, self.waiting)
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        budget = self.limits.session_timeout_s
        t0 = time.monotonic()
        try:
            if budget is None or session is None:
                return await post()
            left = budget - self._spent.get(session, 0.0)
            if left <= 0:
                raise RemoteFailure("timeout", f"the session used up its {budget:g} s (sessionTimeoutSeconds)", route, transport)
            try:
                return await asyncio.wait_for(post(), left)
            except asyncio.TimeoutError:
                raise RemoteFailure("timeout", f"the session ran past its {budget:g} s (sessionTimeoutSeconds)", route, transport) from None
        finally:
            if budget is not None and session is not None:
                self._spent[session] = self._spent.get(session, 0.0) + time.monotonic() - t0
            self.in_flight -= 1
            self._slots.release()
