"""GRPO-family math as pure functions of tensors, so each can be checked against a hand computation.

Shapes: B sequences (prompts x group size, grouped contiguously), T completion positions.
`mask` is 1 on completion tokens the policy chose (up to and including EOS), 0 on padding.
"""

from __future__ import annotations

from typing import Callable

import torch

from .names import LOSS_TYPES as SUPPORTED_LOSS_TYPES
from .names import GRPO_FAMILY, PPO_FAMILY

ADVANTAGE_EPS = 1e-4

# Registries by name (verl's core_algos.py): a new normalisation or loss aggregation is one registered function,
# and the names are the contracts' (`training.advantageNorm`, `training.lossType`).
AdvantageNorm = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor]  # (rewards, grouped, centered, eps)
LossAggregation = Callable[[torch.Tensor, torch.Tensor, int | None], torch.Tensor]  # (per-token loss, mask, max len)
ADVANTAGE_NORMS: dict[str, AdvantageNorm] = {}
LOSS_AGGREGATIONS: dict[str, LossAggregation] = {}
SEQUENCE_RATIO_LOSSES: set[str] = set()  # loss types whose importance ratio is one per sequence (gspo)
TOKEN_NORMALISED_LOSSES: set[str] = set()  # loss types divided by the batch's token count (micro-batches scale by tokens)


def register_advantage_norm(name: str) -> Callable[[AdvantageNorm], AdvantageNorm]:
    def add(fn: AdvantageNorm) -> AdvantageNorm:
        ADVANTAGE_NORMS[name] = fn
        return fn

    return add


def register_loss(name: str, sequence_ratio: bool = False, token_normalised: bool = False) -> Callable[[LossAggregation], LossAggregation]:
    def add(fn: LossAggregation) -> LossAggregation:
        LOSS_AGGREGATIONS[name] = fn
        if sequence_ratio:
            SEQUENCE_RATIO_LOSSES.add(name)
        if token_normalised:
            TOKEN_NORMALISED_LOSSES.add(name)
        return fn

    return add


def effective_loss_type(algorithm_name: str, loss_type: str) -> str:
    """The actor's `training.lossType` when set away from the default "grpo", else `algorithm.name`.

    Both fields exist in RunSpec v1; with defaults filled we cannot tell "left at grpo" from
    "chose grpo", so "grpo" means "follow the algorithm".
    """
    if loss_type == "grpo" and algorithm_name in PPO_FAMILY:
        return "dapo"  # the PPO family's policy loss: the token mean over the batch (learners/ppo.py)
    if loss_type == "grpo" and algorithm_name in GRPO_FAMILY and algorithm_name not in SUPPORTED_LOSS_TYPES:
        return "grpo"  # a GRPO-family learner that is not a loss of its own (cory) trains with GRPO's
    return loss_type if loss_type != "grpo" else algorithm_name


def loss_type_issue(algorithm_name: str, loss_type: str) -> str | None:
    if loss_type != "grpo" and algorithm_name != "grpo" and loss_type != algorithm_name:
        return (
            f'"{loss_type}" disagrees with algorithm.name "{algorithm_name}": set them equal, '
            'or leave lossType at "grpo" to follow algorithm.name'
        )
    return None


def group_advantages(rewards: torch.Tensor, group_size: int, norm: str = "group", eps: float = ADVANTAGE_EPS) -> torch.Tensor:
    """Advantages of B = groups x group_size rewards (groups contiguous).

    group: (r - group mean) / (group std + eps)  (std with Bessel's correction, as TRL)
    batch: (r - group mean) / (batch std + eps)
    none:  r - group mean                        (Dr. GRPO)
    """
    if rewards.dim() != 1 or rewards.numel() % group_size != 0:
        raise ValueError(f"rewards must be 1-D with a multiple of group_size={group_size} entries, got {tuple(rewards.shape)}")
    r = rewards.float().view(-1, group_size)
    centered = r - r.mean(dim=1, keepdim=True)
    if norm not in ADVANTAGE_NORMS:
        raise ValueError(f"unknown advantage normalisation {norm!r}")
    return ADVANTAGE_NORMS[norm](rewards, r, centered, eps).reshape(-1)


@register_advantage_norm("group")
def _group_norm(rewards: torch.Tensor, grouped: torch.Tensor, centered: torch.Tensor, eps: float) -> torch.Tensor:
    return centered / (grouped.std(dim=1, keepdim=True) + eps)


@register_advantage_norm("batch")
def _batch_norm(rewards: torch.Tensor, grouped: torch.Tensor, centered: torch.Tensor, eps: float) -> torch.Tensor:
    return centered / (rewards.float().std() + eps)


@register_advantage_norm("none")
def _no_norm(rewards: torch.Tensor, grouped: torch.Tensor, centered: torch.Tensor, eps: float) -> torch.Tensor:
    return centered


def per_token_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """k3 estimator of KL(policy || reference) per token: exp(d) - d - 1 with d = ref - policy (>= 0)."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.to(x.dtype)
    return (x * m).sum() / m.sum().clamp(min=1)


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    loss_type: str = "grpo",
    clip_eps_low: float = 0.2,
    clip_eps_high: float = 0.2,
    max_completion_len: int | None = None,
    ref_logp: torch.Tensor | None = None,
    kl_beta: float = 0.0,
    is_weights: torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    entropy_coef: float = 0.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Clipped policy-gradient loss (+ beta * KL to a reference - c * entropy), aggregated per `loss_type`.

    per token: -w * min(ratio * A, clip(ratio, 1 - eps_low, 1 + eps_high) * A) + beta * kl - c * H
    where w is the sampler-mismatch weight (`truncated_importance_weights`; 1 when None). The KL
    term is not weighted, as in TRL and verl. H is the policy's entropy at the token's position
    (differentiable): the entropy bonus of PPO (Schulman et al. 2017, eq. 9) and MAPPO, which keeps a
    policy from collapsing onto one answer before its reward can tell the answers apart.
    grpo:    mean over each sequence's tokens, then mean over sequences
    dapo:    sum over all tokens / number of tokens in the batch
    dr_grpo: sum over all tokens / (B * max_completion_len)   (a constant normaliser)
    gspo:    the ratio is per sequence, s_i = exp(mean_t(logp - old_logp)) (length-normalised,
             GSPO eq. 7), clipped per sequence; then aggregated like grpo. Its clip range is
             about the sequence ratio, so the paper uses eps ~3e-4/4e-4, not 0.2.
    Returns the loss and float stats: clip_frac (share of tokens where the clip is active; for
    gspo the share of sequences), kl.
    """
    m = mask.to(logp.dtype)
    if loss_type not in LOSS_AGGREGATIONS:
        raise ValueError(f"unknown loss type {loss_type!r}")
    if loss_type in SEQUENCE_RATIO_LOSSES:
        ratio = sequence_ratio(logp, old_logp, m)
    else:
        ratio = torch.exp(logp - old_logp)
    # One advantage per sequence (GRPO family), or per token (PPO family: GAE over a critic's values).
    a = advantages.to(logp.dtype)
    a = a.unsqueeze(1) if a.dim() == 1 else a
    unclipped = ratio * a
    clipped = torch.clamp(ratio, 1 - clip_eps_low, 1 + clip_eps_high) * a
    per_token = -torch.minimum(unclipped, clipped)
    if is_weights is not None:
        per_token = per_token * is_weights.detach().to(logp.dtype)
    stats: dict[str, float] = {}
    if ref_logp is not None and kl_beta > 0:
        kl = per_token_kl(logp, ref_logp)
        per_token = per_token + kl_beta * kl
        stats["kl"] = float(masked_mean(kl.detach(), m))
    if entropy is not None and entropy_coef > 0:
        per_token = per_token - entropy_coef * entropy.to(logp.dtype)
    loss = LOSS_AGGREGATIONS[loss_type](per_token, m, max_completion_len)
    with torch.no_grad():
        is_clipped = ((ratio < 1 - clip_eps_low) & (a < 0)) | ((ratio > 1 + clip_eps_high) & (a > 0))
        if loss_type in SEQUENCE_RATIO_LOSSES:
            has_tokens = (m.sum(dim=1) > 0).to(logp.dtype)
            stats["clip_frac"] = float((is_clipped[:, 0].to(logp.dtype) * has_tokens).sum() / has_tokens.sum().clamp(min=1))
        else:
            stats["clip_frac"] = float(masked_mean(is_clipped.to(logp.dtype), m))
    return loss, stats


@register_loss("grpo")
def _sequence_mean(per_token: torch.Tensor, m: torch.Tensor, max_completion_len: int | None) -> torch.Tensor:
    """Mean over each sequence's tokens, then mean over sequences."""
    return ((per_token * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)).mean()


register_loss("gspo", sequence_ratio=True)(_sequence_mean)


@register_loss("dapo", token_normalised=True)
def _token_mean(per_token: torch.Tensor, m: torch.Tensor, max_completion_len: int | None) -> torch.Tensor:
    """Sum over all tokens / number of tokens in the batch."""
    return (per_token * m).sum() / m.sum().clamp(min=1)


@register_loss("dr_grpo")
def _constant_normaliser(per_token: torch.Tensor, m: torch.Tensor, max_completion_len: int | None) -> torch.Tensor:
    """Sum over all tokens / (B * max_completion_len)."""
    if not max_completion_len:
        raise ValueError("dr_grpo needs max_completion_len")
    return (per_token * m).sum() / (per_token.shape[0] * max_completion_len)


def sequence_ratio(logp: torch.Tensor, old_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """GSPO's importance ratio, one per sequence, broadcast to [B, T]: exp of the mean token log-ratio.

    Shaped [B, 1] so it broadcasts against per-token terms (the KL stays per token).
    """
    m = mask.to(logp.dtype)
    log_ratio = ((logp - old_logp) * m).sum(dim=1, keepdim=True) / m.sum(dim=1, keepdim=True).clamp(min=1)
    return torch.exp(log_ratio)


def truncated_importance_weights(
    trainer_logp: torch.Tensor, sampler_logp: torch.Tensor, mask: torch.Tensor, cap: float
) -> tuple[torch.Tensor, dict[str, float]]:
    """Truncated importance sampling (TIS) against the sampler/trainer mismatch, per token:

        w = min(exp(trainer_logp_old - sampler_logp), cap)

    `trainer_logp` are the trainer's log-probs of the batch before this step's update (the ratio's
    denominator), `sampler_logp` the rollout engine's. The weight corrects the policy gradient for
    sampling from a slightly different distribution (bf16 kernels, a stale copy of the weights); the
    cap bounds its variance. Returned detached, 1 where the mask is 0 (padding carries no log-prob).
    Stats over masked tokens: tis/weight_mean (of the truncated weights) and tis/clipped_frac (share
    of tokens whose ratio exceeded the cap).
    """
    m = mask.to(torch.float32)
    with torch.no_grad():
        log_ratio = (trainer_logp.detach().float() - sampler_logp.float()) * m  # 0 on padding: ratio 1, never inf
        ratio = torch.exp(log_ratio)
        weights = torch.clamp(ratio, max=cap)
        stats = {
            "tis/weight_mean": float(masked_mean(weights, m)),
            "tis/clipped_frac": float(masked_mean((ratio > cap).to(torch.float32), m)),
        }
    return weights, stats
