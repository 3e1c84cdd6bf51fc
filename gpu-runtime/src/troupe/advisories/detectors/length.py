"""Detectors over completion length: length explosion (much longer than at the start) and truncation (most
completions cut off at maxNewTokens)."""

from __future__ import annotations

from typing import Sequence

from ..registry import register
from ..types import AdvisorySettings, Finding, StepRecord
from ..window import last, mean, series, steps_label, windowed


@register("length_explosion")
class LengthExplosion:
    """Completions grew to several times their starting length (metric `completion_len`)."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        w = windowed(history, "completion_len", settings.window)
        if w is None:
            return None
        baseline, recent = w
        base, cur = mean(v for _, v in baseline), mean(v for _, v in recent)
        if base <= 0 or cur < settings.length_explosion_growth * base:
            return None
        first, last_step = recent[0][0], recent[-1][0]
        longest = sorted((e for r in history if first <= r.step <= last_step for e in r.episodes), key=lambda e: -len(e.text))[:5]
        return Finding(
            severity="warning",
            summary=f"Completions averaged {cur:.1f} tokens over {steps_label(first, last_step)}, {cur / base:.1f}x the {base:.1f} of {steps_label(baseline[0][0], baseline[-1][0])}.",
            from_step=first,
            to_step=last_step,
            values={"completion_len": cur, "baseline_completion_len": base, "growth": cur / base},
            episodes=tuple(e.ref(with_sample=True) for e in longest),
            examples=tuple(e.text[-200:] for e in longest[:3]),
            hint="Length is being rewarded (or not penalised): add a length penalty or algorithm.overlong shaping, use a token-level loss (dapo/dr_grpo) instead of per-sequence averaging, or lower maxNewTokens.",
        )


@register("truncation")
class Truncation:
    """Most completions came to hit maxNewTokens (metric `truncation_rate`): their endings, and often their
    rewards, are cut off. Only a share that grew past the threshold counts: a run that truncates from its
    first window on is a task whose answers fill maxNewTokens by design (the demos' fixed-length answers)."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        w = windowed(history, "truncation_rate", settings.window)
        if w is None:
            return None
        baseline, points = w
        base, cur = mean(v for _, v in baseline), mean(v for _, v in points)
        if cur < settings.truncation_share or base >= settings.truncation_share:
            return None
        first, last_step = points[0][0], points[-1][0]
        return Finding(
            severity="warning",
            summary=f"{cur:.0%} of completions hit maxNewTokens over {steps_label(first, last_step)}, up from {base:.0%} over {steps_label(baseline[0][0], baseline[-1][0])}.",
            from_step=first,
            to_step=last_step,
            values={"truncation_rate": cur, "baseline_truncation_rate": base},
            episodes=tuple({(e.step, e.environment, e.group): e.ref() for r in history if first <= r.step <= last_step for e in r.episodes}.values())[:10],
            hint="Raise sampling.maxNewTokens if answers need the room; otherwise penalise or filter cut-off completions (algorithm.overlong) so the policy learns to stop.",
        )
