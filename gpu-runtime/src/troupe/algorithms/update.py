"""One actor's policy update for one step: `iterationsPerBatch` optimizer steps over its batch, each
split into this rank's rows and those into micro-batches whose gradients accumulate.

Every loss type is a sum over rows (or tokens) divided by a count of the WHOLE batch (grpo, gspo:
rows; dapo: tokens; dr_grpo: rows x max length). `policy_loss` normalises by the micro-batch's own
count, so each micro-batch's loss is rescaled by (its count / the batch's count): summed over
micro-batches and ranks, the gradient is the one-process, whole-batch gradient. Ranks whose slice is
shorter run zero-weight micro-batches so that every rank does the same number of passes (a sharded
backend's collectives need that).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import torch

from ..engines.train.base import TrainBackend
from ..launch.distributed import RankContext
from .grpo import SEQUENCE_RATIO_LOSSES, TOKEN_NORMALISED_LOSSES, masked_mean
from ..engines.rollout.sampling import Rollout, select_rows
from .phase_clock import PhaseClock
from .update_loss import LossOptions, update_loss

# Stats averaged over tokens; gspo's clip_frac is a share of sequences (weighted by sequences with tokens).
TOKEN_STATS = ("clip_frac", "kl")


@dataclass
class MicroBatch:
    batch: Rollout
    mask: torch.Tensor
    advantages: torch.Tensor
    scale: float  # this micro-batch's share of the whole batch's normaliser (0 for padding)
    tokens: float
    sequences: float  # rows with at least one token


def plan_micro_batches(
    batch: Rollout, mask: torch.Tensor, advantages: torch.Tensor, loss_type: str, ctx: RankContext, micro_batch_size: int | None
) -> list[MicroBatch]:
    """This rank's micro-batches, the same number on every rank."""
    rows = batch.completion_ids.shape[0]
    total_tokens = float(mask.sum())
    per_rank = math.ceil(rows / ctx.world_size)
    size = micro_batch_size or per_rank
    count = max(1, math.ceil(per_rank / size))
    start, end = ctx.row_slice(rows)
    out = []
    for k in range(count):
        lo, hi = start + k * size, min(start + (k + 1) * size, end)
        if lo >= hi:  # padding: one real row, weight 0 (keeps collectives in step)
            idx = [min(start, rows - 1)]
            out.append(MicroBatch(select_rows(batch, idx), mask[idx], advantages[idx], 0.0, 0.0, 0.0))
            continue
        idx = list(range(lo, hi))
        whole = lo == 0 and hi == rows
        mb_mask = mask if whole else mask[lo:hi]
        tokens = float(mb_mask.sum())
        if loss_type in TOKEN_NORMALISED_LOSSES:
            scale = 1.0 if whole else tokens / max(total_tokens, 1.0)
        else:  # grpo, gspo, dr_grpo: normalised by the row count
            scale = 1.0 if whole else (hi - lo) / rows
        out.append(
            MicroBatch(
                batch if whole else select_rows(batch, idx),
                mb_mask,
                advantages if whole else advantages[lo:hi],
                scale,
                tokens,
                float((mb_mask.sum(dim=1) > 0).sum()),
            )
        )
    return out


class WeightedMeans:
    """Sums of value x weight and of weights, summed over micro-batches and then over ranks."""

    def __init__(self) -> None:
        self.num: dict[str, float] = defaultdict(float)
        self.den: dict[str, float] = defaultdict(float)

    def add(self, name: str, value: float, weight: float) -> None:
        self.num[name] += value * weight
        self.den[name] += weight

    def reduce(self, ctx: RankContext) -> dict[str, float]:
        names = sorted(self.num)
        totals = ctx.sum_floats([self.num[n] for n in names] + [self.den[n] for n in names])
        k = len(names)
        return {n: totals[i] / totals[k + i] if totals[k + i] > 0 else float("nan") for i, n in enumerate(names)}


def update_actor(
    backend: TrainBackend,
    batch: Rollout,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    options: LossOptions,
    iterations: int,
    max_grad_norm: float,
    ctx: RankContext,
    micro_batch_size: int | None,
    reference: Callable[[Rollout], torch.Tensor | None],
    liger_cls: Any = None,
    after_reference: Callable[[], None] | None = None,
) -> dict[str, float]:
    """Runs the update; returns the step's metrics (loss, grad_norm, clip_frac, kl, logprob_gap, entropy),
    identical on every rank."""
    micro = plan_micro_batches(batch, mask, advantages, options.loss_type, ctx, micro_batch_size)
    single = len(micro) == 1 and not ctx.distributed
    clock = PhaseClock(next(backend.module.parameters()).device)  # time/<phase>_s metrics (phase_clock.py)
    with torch.no_grad(), backend.forward_context(), clock.phase("reference"):
        ref_logps = [reference(mb.batch) for mb in micro]
    if after_reference is not None:
        after_reference()  # the loop books the reference's memory peak apart from the update's
    backend.module.train()
    old_logps: list[torch.Tensor | None] = [None] * len(micro)
    first = WeightedMeans()
    sums: dict[str, float] = defaultdict(float)
    for iteration in range(iterations):
        backend.zero_grad()
        loss_total = 0.0
        stats_means = WeightedMeans()
        for k, mb in enumerate(micro):
            with backend.accumulate(last=k == len(micro) - 1):
                with backend.forward_context(), clock.phase("forward"):
                    # Liger's fused loss on CUDA when installed and the options map onto it, else the
                    # token-log-prob kernel + policy_loss; neither materialises [B, T, vocab] logits.
                    loss, stats, logp, entropy = update_loss(
                        backend.module, mb.batch, mb.mask, mb.advantages, old_logps[k], ref_logps[k], options,
                        with_entropy=iteration == 0, liger_cls=liger_cls,
                    )
                factor = mb.scale * backend.loss_scale()
                with clock.phase("backward"):
                    backend.backward(loss if factor == 1.0 else loss * factor)
            loss_total += float(loss.detach()) * mb.scale if not single else float(loss.detach())
            for name, value in stats.items():
                weight = mb.sequences if (name == "clip_frac" and options.loss_type in SEQUENCE_RATIO_LOSSES) else mb.tokens
                stats_means.add(name, value, weight)
            if iteration == 0:
                # The batch's log-probs before any update: the ratio's denominator for every iteration.
                assert logp is not None
                old_logps[k] = logp
                first_single = {
                    "logprob_gap": float(masked_mean((mb.batch.sampler_logprobs - logp).abs(), mb.mask)),
                    "entropy": float(masked_mean(entropy, mb.mask)) if entropy is not None else float("nan"),
                }
                for name, value in first_single.items():
                    first.add(name, value, mb.tokens)
        with clock.phase("optimizer"):
            grad_norm = backend.clip(max_grad_norm)
            backend.step()
        if single:
            sums["loss"] += loss_total
            for name, value in stats.items():
                sums[name] += value
        else:
            sums["loss"] += ctx.sum_floats([loss_total])[0]
            for name, value in stats_means.reduce(ctx).items():
                sums[name] += value
        sums["grad_norm"] += grad_norm
    out = {key: value / iterations for key, value in sums.items()}
    out.update(first_single if single else first.reduce(ctx))
    out.update(clock.seconds())  # this rank's
    return out
