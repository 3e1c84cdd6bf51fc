"""Seconds per phase of an update (forward, backward, optimizer, reference), reported as step metrics.

Why: a step's time was one number (`step_time_s`); where it went needed a profiler (the H200 run's
update was 65 % log-prob backward, found that way). CUDA work is asynchronous, so wall-clock
around a launch measures the launch: on CUDA each phase is bracketed by CUDA events, read once
when the update ends (one synchronisation, which the update's `float(loss)` makes anyway); on
CPU by `time.perf_counter`. Phases of several micro-batches and iterations add up.
"""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Any, Iterator

import torch

PHASES = ("reference", "forward", "backward", "optimizer")


class PhaseClock:
    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda" and torch.cuda.is_available()
        self._spans: list[tuple[str, Any, Any]] = []

    def _now(self) -> Any:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = self._now()
        try:
            yield
        finally:
            self._spans.append((name, start, self._now()))

    def seconds(self) -> dict[str, float]:
        """`time/<phase>_s` for every phase seen (synchronises on CUDA)."""
        out: dict[str, float] = defaultdict(float)
        if self.cuda and self._spans:
            torch.cuda.synchronize()
        for name, start, end in self._spans:
            out[f"time/{name}_s"] += start.elapsed_time(end) / 1000.0 if self.cuda else end - start
        return dict(out)
