"""Per-step phase timings measured from outside a trainer, the same way for Troupe and TRL.

Neither trainer reports where a step's time goes (Troupe emits `step_time_s` only, TRL logs
`step_time` for `training_step` only), so both are timed by wrapping the functions each one
calls for a phase. Timing is exclusive: a wrapped call inside another wrapped call is charged
to its own phase and subtracted from the outer one, so the phases of a step never overlap and
`other` = step time - sum(phases) is what no wrapper covers (tokenising, padding, decoding,
advantages, zero_grad, the trainers' own bookkeeping).
"""

from __future__ import annotations

import functools
import statistics
import time
from collections import defaultdict
from typing import Any, Callable

import torch

# Reported in this order; `other` is derived.
PHASES = ("generation", "scoring", "forward", "loss", "backward", "clip", "optimizer")


class PhaseTimer:
    def __init__(self) -> None:
        self._stack: list[list[Any]] = []  # [phase, start, seconds spent in nested phases]
        self._current: dict[str, float] = defaultdict(float)
        self.steps: list[dict[str, float]] = []

    def begin(self, phase: str) -> None:
        self._stack.append([phase, time.perf_counter(), 0.0])

    def end(self) -> None:
        phase, start, nested = self._stack.pop()
        elapsed = time.perf_counter() - start
        self._current[phase] += elapsed - nested
        if self._stack:
            self._stack[-1][2] += elapsed

    def wrap(self, owner: Any, attribute: str, phase: str) -> None:
        """Replace `owner.attribute` (a function, method or module attribute) by a timed call."""
        original: Callable[..., Any] = getattr(owner, attribute)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.begin(phase)
            try:
                return original(*args, **kwargs)
            finally:
                self.end()

        setattr(owner, attribute, timed)

    def wrap_everywhere(self, function: Callable[..., Any], phase: str, package: str) -> int:
        """Time `function` wherever `package`'s loaded modules imported it by name (`from .x import f`
        binds a copy of the name, so the defining module alone is not enough). Returns the count."""
        import sys

        count = 0
        for name, module in list(sys.modules.items()):
            if (name == package or name.startswith(package + ".")) and getattr(module, function.__name__, None) is function:
                self.wrap(module, function.__name__, phase)
                count += 1
        if count == 0:
            raise RuntimeError(f"{function.__module__}.{function.__name__} is not imported by any {package} module")
        return count

    def end_step(self, step_seconds: float) -> None:
        """Close a step: its phases so far, `other`, and the step's own wall time."""
        row = {phase: self._current.get(phase, 0.0) for phase in PHASES}
        row["other"] = step_seconds - sum(row.values())
        row["step"] = step_seconds
        self.steps.append(row)
        self._current = defaultdict(float)


def instrument_common(timer: PhaseTimer) -> None:
    """Phases both trainers reach through the same libraries: HF `generate`, autograd, clipping, optimizers."""
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
    from transformers.generation.utils import GenerationMixin

    timer.wrap(GenerationMixin, "generate", "generation")
    timer.wrap(torch.Tensor, "backward", "backward")
    timer.wrap(torch.nn.utils, "clip_grad_norm_", "clip")
    # Global hooks fire for every optimizer, whichever object the trainer built.
    register_optimizer_step_pre_hook(lambda *_: timer.begin("optimizer"))
    register_optimizer_step_post_hook(lambda *_: timer.end())


def summarise(steps: list[dict[str, float]], skip_first: int = 1) -> dict[str, float]:
    """Mean seconds per step of each phase (the first `skip_first` steps are warm-up), and the median step."""
    kept = steps[skip_first:] or steps
    out = {phase: statistics.fmean(s[phase] for s in kept) for phase in (*PHASES, "other", "step")}
    out["median_step"] = statistics.median(s["step"] for s in kept)
    return out
