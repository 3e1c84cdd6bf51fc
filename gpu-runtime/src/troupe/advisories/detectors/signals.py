"""Detectors over run-level signals: reward hacking (train reward up while the held-out eval reward goes
down), NaN/inf metrics, and rollouts staler than K updates."""

from __future__ import annotations

from typing import Sequence

from ..registry import register
from ..types import AdvisorySettings, Finding, StepRecord
from ..window import eval_trend

EVAL_REWARD = "eval/reward/mean"
TRAIN_REWARD = "reward/mean"


@register("reward_hacking")
class RewardHacking:
    """The training reward rises while the held-out reward (eval) falls at each of the last evaluations:
    the policy is learning the reward's loopholes rather than the task."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        k = settings.reward_hacking_evals
        trend = eval_trend(history, EVAL_REWARD, TRAIN_REWARD, k, settings.window, breaks=lambda previous, next_: next_ > previous)
        if trend is None:
            return None
        before, after = trend.train_before, trend.train_after
        if trend.eval_start - trend.eval_end < settings.reward_hacking_eval_drop or after - before < settings.reward_hacking_train_rise:
            return None
        return Finding(
            severity="warning",
            summary=(
                f"Between steps {trend.first_step} and {trend.last_step} the training reward rose from {before:.3g} to {after:.3g} "
                f"while the held-out eval reward fell at each of {k} evaluations, from {trend.eval_start:.3g} to {trend.eval_end:.3g}."
            ),
            from_step=trend.first_step,
            to_step=trend.last_step,
            values={"train_reward_before": before, "train_reward_after": after, "eval_reward_before": trend.eval_start, "eval_reward_after": trend.eval_end},
            episodes=tuple({(e.step, e.environment, e.group): e.ref() for r in history if trend.first_step <= r.step <= trend.last_step for e in r.episodes}.values())[:10],
            hint="Read the high-reward transcripts for what the reward accepts that it should not; tighten the reward (or add a judge), raise klBeta, and keep the checkpoint from before the eval reward fell.",
        )


@register("non_finite", learners=("rollout", "offline"))
class NonFinite:
    """A metric was NaN or infinite at this step (the event itself leaves such values out)."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        now = history[-1]
        if not now.non_finite:
            return None
        names = sorted(now.non_finite)
        return Finding(
            severity="critical",
            summary=f"At step {now.step}, {', '.join(names)} {'was' if len(names) == 1 else 'were'} NaN or infinite.",
            from_step=now.step,
            to_step=now.step,
            values={"metrics": float(len(names))},
            episodes=tuple({(e.step, e.environment, e.group): e.ref() for e in now.episodes}.values())[:10],
            hint="Lower the learningRate or maxGradNorm, train in fp32 (training.precision), and check that every reward returns a finite number; resume from the last checkpoint before this step.",
        )


@register("staleness")
class Staleness:
    """Rollouts trained on were sampled more than K updates ago (metric `staleness/max`)."""

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None:
        now = history[-1]
        lag = now.metrics.get("staleness/max")
        limit = settings.staleness_max
        if lag is None or limit is None or lag <= limit:
            return None
        return Finding(
            severity="warning",
            summary=f"At step {now.step} the batch trained on was sampled {lag:g} updates behind the policy (K = {limit}).",
            from_step=now.step,
            to_step=now.step,
            values={"staleness": lag, "k": float(limit)},
            hint="Off-policy samples bias the update: lower algorithm.async.maxStaleness, turn on importance correction (TIS), or sample faster (more rollout workers).",
        )
