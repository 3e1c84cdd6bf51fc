"""DAPO's batch shaping as pure functions: zero-variance groups (dynamic sampling) and overlong
completions (filter or soft penalty).

"Truncated" always means the sampler drew no end-of-sequence token before maxNewTokens
(`Rollout.ended` is False): it is never guessed from the decoded text, which may legitimately
end anywhere.
"""

from __future__ import annotations

from typing import Any

import torch

OVERLONG_COMPONENT = "overlong_penalty"
# Rewards closer than this count as equal: a group of them has no advantage signal.
ZERO_VARIANCE_ATOL = 1e-6


def zero_variance_groups(rewards: torch.Tensor, group_size: int, atol: float = ZERO_VARIANCE_ATOL) -> torch.Tensor:
    """[groups] bool: True where every reward of the group is the same (max - min <= atol)."""
    if rewards.dim() != 1 or rewards.numel() % group_size != 0:
        raise ValueError(f"rewards must be 1-D with a multiple of group_size={group_size} entries, got {tuple(rewards.shape)}")
    r = rewards.float().view(-1, group_size)
    return (r.max(dim=1).values - r.min(dim=1).values) <= atol


def overlong_penalty(lengths: torch.Tensor, ended: torch.Tensor, max_new_tokens: int, buffer_tokens: int, penalty: float) -> torch.Tensor:
    """DAPO's soft overlong punishment (eq. 13), <= 0 per completion.

    With L = max_new_tokens and C = buffer_tokens: 0 up to L - C tokens, then a linear ramp
    -penalty * (len - (L - C)) / C, and the full -penalty for a completion cut off at L
    without an end-of-sequence token (whatever its length says).
    """
    start = max_new_tokens - buffer_tokens
    ramp = ((lengths.float() - start) / buffer_tokens).clamp(min=0.0, max=1.0)
    return torch.where(ended.bool(), -penalty * ramp, torch.full_like(ramp, -penalty))


def apply_overlong_penalty(
    rewards: list[float], components: list[dict[str, float]], lengths: torch.Tensor, ended: torch.Tensor, max_new_tokens: int, overlong: dict[str, Any]
) -> tuple[list[float], list[dict[str, float]]]:
    """Adds the penalty to each total and logs it as its own reward component."""
    pen = overlong_penalty(lengths.cpu(), ended.cpu(), max_new_tokens, int(overlong["bufferTokens"]), float(overlong["penalty"])).tolist()
    return [r + p for r, p in zip(rewards, pen)], [{**c, OVERLONG_COMPONENT: p} for c, p in zip(components, pen)]


def overlong_loss_mask(loss_mask: torch.Tensor, ended: torch.Tensor) -> torch.Tensor:
    """Overlong filtering: truncated completions keep their rewards (group statistics) but train nothing."""
    return loss_mask * ended.to(loss_mask.dtype).unsqueeze(1)


def group_rows(groups: list[int], group_size: int) -> list[int]:
    """Row indices of the given groups (groups contiguous, `group_size` rows each)."""
    return [g * group_size + s for g in groups for s in range(group_size)]
