"""DPO math as pure functions of tensors, with TRL 1.13's `DPOConfig.loss_type` names.

Inputs are per-pair sequence log-probs (the sum of the completion's token log-probs) of the policy
and of the reference, for the chosen and the rejected completion: shape [P] each. Implicit rewards are
r = beta * (policy - reference). For a pair, delta = (chosen logratio) - (rejected logratio).

sigmoid: -log sigmoid(beta * delta)                                  (DPO, Rafailov et al. 2023, eq. 7)
hinge:   relu(1 - beta * delta)                                      (SLiC, Zhao et al. 2023)
ipo:     (delta_per_token - 1 / (2 * beta))^2, each logratio divided by its completion's token count
         (IPO, Azar et al. 2023, eq. 17; the per-token normalisation is TRL's, agreed with the authors)
robust:  (-(1 - eps) log sigmoid(beta delta) + eps log sigmoid(-beta delta)) / (1 - 2 eps)
         (Robust DPO, Chowdhury et al. 2024), eps = label smoothing
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

DPO_LOSS_TYPES = ("sigmoid", "hinge", "ipo", "robust")


def sequence_logps(token_logps: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sum of the completion's token log-probs per sequence: [B, T] -> [B]."""
    return (token_logps * mask.to(token_logps.dtype)).sum(dim=1)


def dpo_loss(
    chosen_logps: torch.Tensor,
    rejected_logps: torch.Tensor,
    ref_chosen_logps: torch.Tensor,
    ref_rejected_logps: torch.Tensor,
    beta: float,
    loss_type: str = "sigmoid",
    label_smoothing: float = 0.0,
    chosen_tokens: torch.Tensor | None = None,
    rejected_tokens: torch.Tensor | None = None,
    normaliser: float | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Per-pair losses summed / `normaliser` (default: the number of pairs, i.e. the mean).

    `chosen_tokens` / `rejected_tokens` ([P], completion token counts) are needed by ipo only.
    Stats (means over the pairs): `dpo/margin` (chosen reward - rejected reward), `dpo/accuracy`
    (share of pairs whose chosen reward is higher), `dpo/chosen_reward`, `dpo/rejected_reward`.
    """
    chosen_logratios = chosen_logps - ref_chosen_logps
    rejected_logratios = rejected_logps - ref_rejected_logps
    delta = chosen_logratios - rejected_logratios
    if loss_type == "sigmoid":
        per_pair = -F.logsigmoid(beta * delta)
    elif loss_type == "hinge":
        per_pair = torch.relu(1 - beta * delta)
    elif loss_type == "ipo":
        if chosen_tokens is None or rejected_tokens is None:
            raise ValueError("ipo needs chosen_tokens and rejected_tokens")
        ipo_delta = chosen_logratios / chosen_tokens.clamp(min=1) - rejected_logratios / rejected_tokens.clamp(min=1)
        per_pair = (ipo_delta - 1 / (2 * beta)) ** 2
    elif loss_type == "robust":
        if not 0 <= label_smoothing < 0.5:
            raise ValueError(f"robust needs 0 <= label_smoothing < 0.5, got {label_smoothing}")
        clean = -(1 - label_smoothing) * F.logsigmoid(beta * delta)
        flipped = -label_smoothing * F.logsigmoid(-beta * delta)
        per_pair = (clean - flipped) / (1 - 2 * label_smoothing)
    else:
        raise ValueError(f"unknown DPO loss type {loss_type!r} (supported: {', '.join(DPO_LOSS_TYPES)})")
    pairs = per_pair.shape[0]
    loss = per_pair.sum() / (normaliser if normaliser is not None else max(pairs, 1))
    return loss, pair_stats(chosen_logratios, rejected_logratios, beta)


def pair_stats(chosen_logratios: torch.Tensor, rejected_logratios: torch.Tensor, beta: float) -> dict[str, float]:
    with torch.no_grad():
        chosen_rewards = beta * chosen_logratios.detach()
        rejected_rewards = beta * rejected_logratios.detach()
        return {
            "dpo/margin": float((chosen_rewards - rejected_rewards).mean()),
            "dpo/accuracy": float((chosen_rewards > rejected_rewards).float().mean()),
            "dpo/chosen_reward": float(chosen_rewards.mean()),
            "dpo/rejected_reward": float(rejected_rewards.mean()),
        }
