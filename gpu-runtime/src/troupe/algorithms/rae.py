"""RAE, the role-conditioned advantage estimator of SPIRAL (Liu et al. 2025), as pure functions and its state.

In zero-sum self-play a group's mean reward says nothing about a role (X's wins are O's losses), so each
(environment, actor) seat keeps a moving average of the rewards it earned, and an episode's advantage is its
reward minus its seat's baseline. The baseline used for a step is the one before the step's rewards (it does not
depend on the episodes it scores); it starts at 0, as SPIRAL's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


def rae_advantages(rewards: torch.Tensor, baseline: float) -> torch.Tensor:
    """Each reward against its seat's baseline."""
    return rewards.float() - baseline


def rae_update(baseline: float, rewards: torch.Tensor, decay: float) -> float:
    """The seat's baseline after a step: decay * baseline + (1 - decay) * the step's mean reward."""
    return decay * baseline + (1.0 - decay) * float(rewards.float().mean())


@dataclass
class RaeBaselines:
    """Every seat's baseline, keyed "environment/actor" (checkpointed with the learner)."""

    decay: float
    values: dict[str, float] = field(default_factory=dict)

    def advantages(self, seat: str, rewards: torch.Tensor) -> torch.Tensor:
        baseline = self.values.get(seat, 0.0)
        self.values[seat] = rae_update(baseline, rewards, self.decay)
        return rae_advantages(rewards, baseline)
