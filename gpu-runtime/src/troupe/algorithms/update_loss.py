"""One policy-update loss, two implementations: Liger's fused linear GRPO loss where it applies,
else our token-log-prob kernel + `grpo.policy_loss` (the exact equivalent; the only path on CPU).

Liger (`LigerFusedLinearGRPOLoss`, liger-kernel on CUDA) takes the last hidden states and the LM
head and computes the clipped loss, the k3 KL and their gradients chunk by chunk. It is used when
the options map onto its arguments exactly (`liger_arguments`); anything else (an unknown loss
type such as gspo, whose clip fraction is per sequence here, or a head that is not a plain matmul)
takes the torch path, which is bounded in memory too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from troupe_kernels import token_logprobs

from .grpo import policy_loss, truncated_importance_weights
from ..engines.train.policy import completion_hidden, completion_logprobs
from ..engines.rollout.sampling import Rollout
from ..spec.runspec_types import Algorithm

# Our loss type -> Liger's. Same formulas: grpo = mean over sequences of each one's token mean;
# dapo = token sum / token count of the batch; dr_grpo = token sum / (B * max_completion_len).
LIGER_LOSS_TYPES = {"grpo": "grpo", "dapo": "dapo", "dr_grpo": "dr_grpo"}


@dataclass(frozen=True)
class LossOptions:
    loss_type: str
    clip_eps_low: float
    clip_eps_high: float
    max_completion_len: int | None
    kl_beta: float
    temperature: float
    # algorithm.importanceCorrection {kind: "tis", cap}: weight each token's policy-gradient term by
    # min(exp(trainer_logp_old - sampler_logp), cap). None: no correction.
    tis_cap: float | None = None
    # algorithm.entropyCoef: the entropy bonus' weight (grpo.policy_loss); 0 leaves the loss as it was.
    entropy_coef: float = 0.0


def tis_cap_of(algorithm: Algorithm) -> float | None:
    """The spec's truncation cap when truncated importance sampling is on, else None."""
    correction = algorithm.importance_correction
    if correction is None or correction.kind != "tis":
        return None
    return float(correction.cap)


def entropy_coef_of(algorithm: Algorithm) -> float:
    """The spec's `entropyCoef`; absent: 0 for every learner, as TRL, verl and OpenRLHF default (a bonus sized for
    tiny models trained from scratch would push a pretrained LLM towards noise; the tests set it where they need it)."""
    return float(algorithm.entropy_coef or 0.0)


def liger_arguments(options: LossOptions, has_ref: bool) -> tuple[dict[str, Any] | None, str | None]:
    """(LigerFusedLinearGRPOLoss constructor arguments, None) or (None, why the torch path is used)."""
    if options.tis_cap is not None:
        return None, "truncated importance sampling (algorithm.importanceCorrection) weights tokens on the torch path"
    if options.entropy_coef > 0:
        return None, "the entropy bonus (algorithm.entropyCoef) needs the entropy's gradient, on the torch path"
    liger_type = LIGER_LOSS_TYPES.get(options.loss_type)
    if liger_type is None:
        return None, f'loss type "{options.loss_type}" has no exact Liger equivalent'
    if liger_type == "dr_grpo" and not options.max_completion_len:
        return None, "dr_grpo needs max_completion_len"
    use_kl = has_ref and options.kl_beta > 0
    return {
        "beta": options.kl_beta if use_kl else 0.0,
        # Reference log-probs are computed once per batch by the caller and passed in.
        "use_ref_model": use_kl,
        "epsilon_low": options.clip_eps_low,
        "epsilon_high": options.clip_eps_high,
        "loss_type": liger_type,
        "max_completion_length": options.max_completion_len,
        "importance_sampling_level": "token",
        "temperature": options.temperature if options.temperature > 0 else 1.0,
    }, None


def resolve_liger(device: torch.device) -> Any:
    """Liger's loss class on CUDA with liger-kernel installed, else None (imported lazily)."""
    if device.type != "cuda":
        return None
    from troupe_kernels.liger import liger_grpo_loss_class  # optional engine: Liger, on CUDA with liger-kernel installed

    return liger_grpo_loss_class()


def update_loss(
    model: Any,
    batch: Rollout,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    old_logp: torch.Tensor | None,
    ref_logp: torch.Tensor | None,
    options: LossOptions,
    with_entropy: bool = False,
    liger_cls: Any = None,
) -> tuple[torch.Tensor, dict[str, float], torch.Tensor | None, torch.Tensor | None]:
    """(loss, stats, detached log-probs, entropy) for one optimiser step.

    old_logp None means "this batch's first iteration": the old log-probs are the current ones
    (ratio 1), and they are returned so later iterations can pass them back. The log-probs come
    back detached, and only where they were computed (always on the torch path; on the Liger
    path only on the first iteration, where they are needed as the ratio's denominator).
    """
    # Liger takes one advantage per sequence: per-token advantages (PPO family) take the torch path.
    kwargs, _why_not = liger_arguments(options, ref_logp is not None) if liger_cls is not None and advantages.dim() == 1 else (None, None)
    fused = completion_hidden(model, batch) if kwargs is not None else None
    if fused is None:
        bonus = options.entropy_coef > 0
        logp, entropy = completion_logprobs(model, batch, options.temperature, with_entropy=with_entropy or bonus, entropy_grad=bonus)
        old = logp.detach() if old_logp is None else old_logp
        weights, tis_stats = (
            truncated_importance_weights(old, batch.sampler_logprobs, mask, options.tis_cap) if options.tis_cap is not None else (None, {})
        )
        loss, stats = policy_loss(
            logp,
            old,
            advantages,
            mask,
            loss_type=options.loss_type,
            clip_eps_low=options.clip_eps_low,
            clip_eps_high=options.clip_eps_high,
            max_completion_len=options.max_completion_len,
            ref_logp=ref_logp,
            kl_beta=options.kl_beta,
            is_weights=weights,
            entropy=entropy,
            entropy_coef=options.entropy_coef,
        )
        return loss, {**stats, **tis_stats}, logp.detach(), entropy.detach() if entropy is not None else None
    hidden, weight = fused
    assert kwargs is not None
    logp = entropy = None
    if old_logp is None or with_entropy:
        with torch.no_grad():  # one more LM-head pass over the same hidden states, no body pass
            out = token_logprobs(
                hidden.detach(), weight.detach(), batch.completion_ids, temperature=kwargs["temperature"], return_entropy=with_entropy
            )
        logp, entropy = out if with_entropy else (out, None)
    loss_fn = liger_cls(**kwargs)
    loss, metrics = loss_fn(
        hidden,
        weight,
        batch.completion_ids,
        mask.to(torch.float32),  # float32: bf16 cannot count tokens past 256
        advantages.to(torch.float32),
        ref_per_token_logps=ref_logp if kwargs["use_ref_model"] else None,
        old_per_token_logps=logp if old_logp is None else old_logp,
    )
    # Liger's metrics: [kl] when beta != 0, then the clip fraction (both token means over the mask).
    metrics = list(metrics)
    stats: dict[str, float] = {}
    if kwargs["beta"] != 0.0:
        stats["kl"] = float(metrics.pop(0).detach())
    stats["clip_frac"] = float(metrics[0].detach())
    return loss, stats, logp, entropy
