"""Detectors over the policy's own training metrics: entropy collapse, KL blow-up, an actor that stopped changing."""

from __future__ import annotations

from typing import Sequence

from ..registry import register
from ..types import AdvisorySettings, Finding, StepRecord
from ..window import last, mean, series, steps_label, windowed


def _group_refs(records: Sequence[StepRecord], limit: int = 10) -> tuple[dict, ...]:
    seen: dict[tuple[int, str, int], dict] = {}
    for r in records:
        for e in r.episodes:
            seen.setdefault((e.step, e.environment, e.group), e.ref())
    return tuple(list(seen.values())[:limit])


@register("entropy_collapse")
class EntropyCollapse:
    """The mean token entropy (metric `entropy`) fell to a small fraction of its start or near zero: the
    policy has become (nearly) deterministic and stops exploring."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        w = windowed(history, "entropy", settings.window)
        if w is None:
            return None
        baseline, recent = w
        base, cur = mean(v for _, v in baseline), mean(v for _, v in recent)
        if not (cur <= settings.entropy_collapse_floor or (base > 0 and cur <= settings.entropy_collapse_ratio * base)):
            return None
        first, last_step = recent[0][0], recent[-1][0]
        converging, reward = _reward_best_so_far(history, settings.window)
        summary = (
            f"Mean token entropy fell to {cur:.4f} nats over {steps_label(first, last_step)}, from {base:.4f} over {steps_label(baseline[0][0], baseline[-1][0])} ({cur / base:.0%} of it)."
            if base > 0
            else f"Mean token entropy is {cur:.4f} nats over {steps_label(first, last_step)}."
        )
        if converging:
            summary += f" Its reward is still climbing ({reward:.3g}): likely convergence on what is rewarded."
        return Finding(
            # Entropy falling while the reward climbs is a policy settling on its answer (info); while the reward
            # stalls or falls, it is exploration lost (warning).
            severity="info" if converging else "warning",
            summary=summary,
            from_step=first,
            to_step=last_step,
            values={"entropy": cur, "baseline_entropy": base, **({"reward": reward} if reward is not None else {})},
            episodes=_group_refs([r for r in history if first <= r.step <= last_step]),
            hint=(
                "The policy stopped exploring. Try an entropy bonus (algorithm.entropyCoef), a higher clipEpsHigh "
                "(DAPO's clip-higher), a lower learningRate, or a higher sampling temperature."
            ),
        )


def _reward_best_so_far(history: Sequence[StepRecord], window: int) -> tuple[bool, float | None]:
    """Whether the reward is climbing: the last window's mean reward/mean is above the first window's and not
    below the two windows before it (noise of single steps aside); and that mean."""
    points = [v for _, v in series(history, "reward/mean")]
    if len(points) < 3 * window:
        return False, None
    recent = mean(points[-window:])
    before = mean(points[-3 * window : -window])
    return recent > mean(points[:window]) and recent >= before - 0.01, recent


@register("kl_blowup")
class KlBlowup:
    """The KL to the reference (metric `kl`, per token) is large over a whole window: the policy has run
    far from where it started, usually followed by garbage text."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        points = series(last(history, settings.window), "kl")
        if len(points) < settings.window:
            return None
        cur = mean(v for _, v in points)
        if cur < settings.kl_blowup_max:
            return None
        before = series(history[: -settings.window], "kl")
        first, last_step = points[0][0], points[-1][0]
        values = {"kl": cur, "kl_max_setting": settings.kl_blowup_max, "kl_peak": max(v for _, v in points)}
        if before:
            values["kl_before"] = mean(v for _, v in before[-settings.window :])
        return Finding(
            severity="critical" if points[-1][1] >= 5 * settings.kl_blowup_max else "warning",  # the latest step, not the window mean
            summary=f"KL to the reference averaged {cur:.3g} nats/token over {steps_label(first, last_step)} (peak {values['kl_peak']:.3g}; the advisory threshold is {settings.kl_blowup_max:g})"
            + (f", up from {values['kl_before']:.3g} before." if before else "."),
            from_step=first,
            to_step=last_step,
            values=values,
            episodes=_group_refs([r for r in history if first <= r.step <= last_step]),
            hint="Lower the learningRate, raise training.klBeta, tighten clipEpsLow/clipEpsHigh or lower maxGradNorm; read the transcripts for degenerate text.",
        )


@register("actor_stalled", learners=("rollout", "offline"))
class ActorStalled:
    """An actor whose updates no longer change it: its gradient norm is (about) zero for a whole window."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        points = series(last(history, settings.window), "grad_norm")
        if len(points) < settings.window or any(v > settings.actor_stalled_grad_norm for _, v in points):
            return None
        first, last_step = points[0][0], points[-1][0]
        lrs = series(last(history, settings.window), "lr")
        lr_note = " Its learning rate is 0." if lrs and all(v == 0 for _, v in lrs) else ""
        return Finding(
            severity="warning",
            summary=f"The gradient norm was at most {settings.actor_stalled_grad_norm:g} at every step of {steps_label(first, last_step)}: the actor's weights stopped changing.{lr_note}",
            from_step=first,
            to_step=last_step,
            values={"grad_norm_max": max(v for _, v in points), **({"lr": lrs[-1][1]} if lrs else {})},
            episodes=_group_refs([r for r in history if first <= r.step <= last_step]),
            hint=(
                "Usually every group's rewards are equal (advantages 0; see zero-variance groups) or the learning rate "
                "reached 0. Check the reward spread in the transcripts, the scheduler, and that the actor is trainable."
            ),
        )
