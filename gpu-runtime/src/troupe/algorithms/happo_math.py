"""HAPPO's sequential-update factor as pure functions (Kuba et al. 2022, "Trust region policy optimisation in
multi-agent reinforcement learning").

Agents are updated one at a time in a random order; agent i_m's advantage is multiplied by
M = prod_{k<m} pi_new^{i_k}(a^{i_k} | s) / pi_old^{i_k}(a^{i_k} | s), the earlier agents' new/old probability
ratios of the same episode, so each update accounts for how its predecessors already changed the joint policy.
An LLM agent's action is a whole message: its ratio is exp(sum over the message's tokens of log new - log old).
"""

from __future__ import annotations

import torch


def sequence_log_ratio(new_logp: torch.Tensor, old_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """[B, T] token log-probs -> [B]: log(pi_new / pi_old) of each row's trained tokens (the agent's messages)."""
    return ((new_logp - old_logp) * mask).sum(dim=1)


def happo_factor(factor: torch.Tensor, log_ratio: torch.Tensor, clip: float) -> torch.Tensor:
    """The factor after one more agent's update: factor * exp(log_ratio), kept in [1/clip, clip] (a whole
    message's ratio can be far from 1, and an unbounded factor would let one episode dominate a later update)."""
    return (factor * torch.exp(log_ratio)).clamp(1.0 / clip, clip)
