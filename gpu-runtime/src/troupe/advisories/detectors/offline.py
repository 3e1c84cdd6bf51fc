"""Detectors for the offline learners (sft, dpo), over the metrics their loop reports per step (`loss`,
`grad_norm`, `dpo/margin`, `dpo/chosen_reward`, `dpo/rejected_reward`) and at each evaluation (`eval/loss`).
A NaN/inf loss is the shared `non_finite` detector's (the event leaves such values out and says so).
"""

from __future__ import annotations

import math
import statistics
from typing import Sequence

from ..registry import register
from ..types import AdvisorySettings, Finding, StepRecord
from ..window import eval_trend, mean, series, steps_label, windowed

OFFLINE = ("offline",)


@register("loss_not_falling", learners=OFFLINE)
class LossNotFalling:
    """The training loss's last window is not clearly below its first: the data or the learning rate is
    wrong (too low, a scheduler at 0, labels masked out), or the loss went back up."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        w = windowed(history, "loss", settings.window)
        if w is None:
            return None
        baseline, recent = w
        base, cur = mean(v for _, v in baseline), mean(v for _, v in recent)
        if base <= 0 or cur < (1 - settings.loss_not_falling_min_relative_drop) * base:
            return None
        first, last_step = recent[0][0], recent[-1][0]
        rose = cur > base
        return Finding(
            severity="warning",
            summary=(
                f"The training loss averaged {cur:.4g} over {steps_label(first, last_step)}, "
                f"{'up from' if rose else 'against'} {base:.4g} over {steps_label(baseline[0][0], baseline[-1][0])}: "
                f"{'it rose' if rose else f'less than the {settings.loss_not_falling_min_relative_drop:.0%} drop the advisory expects'}."
            ),
            from_step=first,
            to_step=last_step,
            values={"loss": cur, "baseline_loss": base, "relative_drop": (base - cur) / base},
            hint=(
                "Check the learning rate and its scheduler (the lr metric), that the completion/chosen columns hold "
                "what should be learned (not empty, not the prompt), and the maxGradNorm clip; if the loss rose, lower the learningRate."
            ),
        )


@register("grad_norm_blowup", learners=OFFLINE)
class GradNormBlowup:
    """A step's gradient norm many times the median of the window before it: a bad batch or an unstable
    learning rate, usually followed by a loss spike or NaN."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        points = series(history, "grad_norm")
        if len(points) < settings.window + 1 or points[-1][0] != history[-1].step:
            return None
        step, now = points[-1]
        before = [v for _, v in points[-settings.window - 1 : -1]]
        typical = statistics.median(before)
        if typical <= 0 or not math.isfinite(now) or now < settings.grad_norm_blowup_factor * typical:
            return None
        return Finding(
            severity="warning",
            summary=(
                f"At step {step} the gradient norm was {now:.4g}, {now / typical:.1f}x the median {typical:.4g} of "
                f"{steps_label(points[-settings.window - 1][0], points[-2][0])}."
            ),
            from_step=step,
            to_step=step,
            values={"grad_norm": now, "median_grad_norm_before": typical, "factor": now / typical},
            hint="Lower the learningRate or maxGradNorm (the clip), add warmup steps, and look for an odd row (very long, empty, wrong column) in this step's batch.",
        )


@register("dpo_margin_collapse", learners=OFFLINE)
class DpoMarginCollapse:
    """DPO's reward margin (chosen minus rejected implicit reward, `dpo/margin`) fell well below its best
    window: the policy is unlearning the preference it had learned."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        points = series(history, "dpo/margin")
        w = settings.window
        if len(points) < 2 * w:
            return None
        means = [(points[i + w - 1][0], mean(v for _, v in points[i : i + w])) for i in range(len(points) - w + 1)]
        best_step, best = max(means[:-1], key=lambda p: p[1])
        cur = means[-1][1]
        if best <= 0 or cur > (1 - settings.dpo_margin_collapse_drop_share) * best:
            return None
        first, last_step = points[-w][0], points[-1][0]
        accuracy = [v for _, v in series(history, "dpo/accuracy")[-w:]]
        values = {"margin": cur, "best_margin": best, "drop_share": (best - cur) / best}
        if accuracy:
            values["accuracy"] = mean(accuracy)
        return Finding(
            severity="warning",
            summary=(
                f"The DPO reward margin averaged {cur:.4g} over {steps_label(first, last_step)}, down from {best:.4g} "
                f"over the {w} steps to step {best_step} ({(best - cur) / best:.0%} lower)"
                + (f"; preference accuracy {values['accuracy']:.0%}." if accuracy else ".")
            ),
            from_step=first,
            to_step=last_step,
            values=values,
            hint="Lower the learningRate, raise algorithm.beta (stay nearer the reference), or try dpoLoss ipo; check for pairs whose chosen and rejected are the same or swapped.",
        )


@register("dpo_logps_falling", learners=OFFLINE)
class DpoLogpsFalling:
    """The chosen and the rejected completions both lose likelihood against the reference (implicit rewards
    `dpo/chosen_reward`, `dpo/rejected_reward` both falling below 0): the margin can grow while the policy
    unlearns the good answers too (likelihood displacement)."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        chosen = windowed(history, "dpo/chosen_reward", settings.window)
        rejected = windowed(history, "dpo/rejected_reward", settings.window)
        if chosen is None or rejected is None:
            return None
        c0, c1 = mean(v for _, v in chosen[0]), mean(v for _, v in chosen[1])
        r0, r1 = mean(v for _, v in rejected[0]), mean(v for _, v in rejected[1])
        if not (c1 < 0 and r1 < 0 and c0 - c1 >= settings.dpo_logps_falling_chosen_fall and r1 < r0):
            return None
        first, last_step = chosen[1][0][0], chosen[1][-1][0]
        base = steps_label(chosen[0][0][0], chosen[0][-1][0])
        return Finding(
            severity="warning",
            summary=(
                f"Over {steps_label(first, last_step)} the chosen completions' implicit reward fell to {c1:.4g} (from {c0:.4g} over {base}) "
                f"and the rejected's to {r1:.4g} (from {r0:.4g}): both lose log-probability against the reference, "
                "so the margin grows by pushing everything down, the chosen answers included."
            ),
            from_step=first,
            to_step=last_step,
            values={"chosen_reward": c1, "baseline_chosen_reward": c0, "rejected_reward": r1, "baseline_rejected_reward": r0},
            hint="Add an SFT term on the chosen answers (train sft first), raise algorithm.beta or lower the learningRate; check that chosen completions are in the policy's own style.",
        )


@register("overfitting", learners=OFFLINE)
class Overfitting:
    """The held-out loss (`eval/loss`) rose at each of the last evaluations while the training loss fell:
    the model memorises its training rows."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        k = settings.overfitting_evals
        trend = eval_trend(history, "eval/loss", "loss", k, settings.window, breaks=lambda previous, next_: next_ <= previous)
        if trend is None:
            return None
        start, end = trend.eval_start, trend.eval_end
        if start <= 0 or (end - start) / start < settings.overfitting_eval_rise:
            return None
        before, after = trend.train_before, trend.train_after
        if after >= before:
            return None
        return Finding(
            severity="warning",
            summary=(
                f"Between steps {trend.first_step} and {trend.last_step} the eval loss rose at each of {k} evaluations, from {start:.4g} to {end:.4g} "
                f"(+{(end - start) / start:.0%}), while the training loss fell from {before:.4g} to {after:.4g}."
            ),
            from_step=trend.first_step,
            to_step=trend.last_step,
            values={"eval_loss_before": start, "eval_loss_after": end, "train_loss_before": before, "train_loss_after": after},
            hint="Keep the checkpoint from before the eval loss rose; train fewer steps or epochs, lower the learningRate, use LoRA or more data.",
        )
