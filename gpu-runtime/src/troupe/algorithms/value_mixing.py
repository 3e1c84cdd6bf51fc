"""Team values from per-agent values, as pure functions (VDN's sum, QMIX's monotonic mix) and QMIX's mixer.

VDN (Sunehag et al. 2018): V_tot = sum_i V_i. QMIX (Rashid et al. 2018): V_tot = w2 . elu(V W1 + b1) + b2, where
W1, b1, w2, b2 are outputs of hypernetworks over the global state and W1, w2 are taken through abs(), so every
mixing weight is >= 0 and, elu being increasing, dV_tot/dV_i >= 0: an agent whose own value rises never lowers the
team's (the monotonicity that lets each agent read its part of the team value). Shapes: `values` [..., n agents].
"""

from __future__ import annotations

import torch


def vdn_mix(values: torch.Tensor) -> torch.Tensor:
    """[..., n] -> [...]: the team value is the sum of the agents' values."""
    return values.sum(dim=-1)


def qmix_mix(values: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
    """[..., n] -> [...]: the monotonic mix with raw hypernetwork outputs w1 [..., n, e], b1 [..., e], w2 [..., e],
    b2 [...] (abs() is applied here, so any raw output gives a monotonic mix)."""
    hidden = torch.nn.functional.elu(torch.einsum("...n,...ne->...e", values, w1.abs()) + b1)
    return (hidden * w2.abs()).sum(dim=-1) + b2


class QMixer(torch.nn.Module):
    """QMIX's hypernetworks: from a global state embedding [..., state_dim] to the mixing weights of n agents."""

    def __init__(self, agents: int, state_dim: int, embed_dim: int):
        super().__init__()
        self.agents, self.embed_dim = agents, embed_dim
        self.hyper_w1 = torch.nn.Linear(state_dim, agents * embed_dim)
        self.hyper_b1 = torch.nn.Linear(state_dim, embed_dim)
        self.hyper_w2 = torch.nn.Linear(state_dim, embed_dim)
        self.hyper_b2 = torch.nn.Sequential(torch.nn.Linear(state_dim, embed_dim), torch.nn.ReLU(), torch.nn.Linear(embed_dim, 1))

    def weights(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The raw (pre-abs) mixing weights w1 [..., n, e], b1 [..., e], w2 [..., e], b2 [...] for each state."""
        w1 = self.hyper_w1(state).unflatten(-1, (self.agents, self.embed_dim))
        return w1, self.hyper_b1(state), self.hyper_w2(state), self.hyper_b2(state).squeeze(-1)

    def forward(self, values: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        return qmix_mix(values, *self.weights(state))
