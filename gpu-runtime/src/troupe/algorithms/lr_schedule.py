"""Learning-rate schedules as a pure function of the (1-based) step."""

from __future__ import annotations

import math


def lr_at(step: int, base_lr: float, kind: str, warmup_steps: int, total_steps: int) -> float:
    """Learning rate used for optimizer step `step` (1..total_steps).

    Warmup rises linearly to base_lr over the first `warmup_steps` steps (step w gets base_lr).
    After warmup, `linear` and `cosine` decay from base_lr (first step after warmup) towards 0
    without reaching it: the last step still learns (linear ends at base_lr / (total - warmup)).
    """
    if step < 1:
        raise ValueError("steps are 1-based")
    if warmup_steps > 0 and step <= warmup_steps:
        return base_lr * step / warmup_steps
    if kind == "constant":
        return base_lr
    decay_steps = max(1, total_steps - warmup_steps)
    progress = min(1.0, (step - warmup_steps - 1) / decay_steps)
    if kind == "linear":
        return base_lr * (1.0 - progress)
    if kind == "cosine":
        return base_lr * 0.5 * (1.0 + math.cos(math.pi * progress))
    raise ValueError(f"unknown scheduler {kind!r}")
