"""Value normalisation for the PPO family's critics (`algorithm.valueNorm`).

The critic learns returns in normalised units: its outputs are (V - mean) / std of the returns seen so
far. GAE reads denormalised values (V = output * std + mean); the value loss compares the raw outputs
with normalised returns. So a critic's target has unit scale whatever the reward's scale, and a
zero-initialised head predicts the running mean return from the first step instead of climbing from 0
(at 3e-3 that took ~25 steps on the secret digit, bench/README.md).

The running statistics are a debiased exponential moving average of the batch mean and mean square
(Adam's bias correction), as in the MAPPO paper's `ValueNorm` (Yu et al. 2022, appendix: "value
normalization ... running mean and standard deviation of the value targets"); BETA close to 1 makes it
close to the mean over every batch so far, so a step's targets never jump.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

BETA = 0.99999  # the MAPPO reference's; 1 - BETA is each batch's weight before debiasing
MIN_VAR = 1e-2  # the MAPPO reference's floor: returns that barely vary yet are not blown up


@dataclass
class ValueNorm:
    """Running mean and variance of one critic's returns (one value per critic: every head shares them,
    as the agents of an environment share one reward scale)."""

    mean_acc: float = 0.0
    mean_sq_acc: float = 0.0
    debias: float = 0.0
    steps: int = field(default=0)

    @property
    def mean(self) -> float:
        return self.mean_acc / self.debias if self.debias > 0 else 0.0

    @property
    def std(self) -> float:
        if self.debias == 0:
            return 1.0
        var = self.mean_sq_acc / self.debias - self.mean**2
        return max(var, MIN_VAR) ** 0.5

    def update(self, returns: torch.Tensor, mask: torch.Tensor) -> None:
        """Fold one batch's returns (the masked entries) into the running statistics."""
        m = mask.to(torch.float32)
        n = float(m.sum())
        if n == 0:
            return
        r = returns.to(torch.float32)
        batch_mean = float((r * m).sum()) / n
        batch_sq = float((r * r * m).sum()) / n
        self.mean_acc = BETA * self.mean_acc + (1 - BETA) * batch_mean
        self.mean_sq_acc = BETA * self.mean_sq_acc + (1 - BETA) * batch_sq
        self.debias = BETA * self.debias + (1 - BETA)
        self.steps += 1

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.std + self.mean

    def state_dict(self) -> dict[str, float]:
        return {"mean_acc": self.mean_acc, "mean_sq_acc": self.mean_sq_acc, "debias": self.debias, "steps": self.steps}

    def load_state_dict(self, state: dict[str, float]) -> None:
        self.mean_acc, self.mean_sq_acc, self.debias = float(state["mean_acc"]), float(state["mean_sq_acc"]), float(state["debias"])
        self.steps = int(state["steps"])
