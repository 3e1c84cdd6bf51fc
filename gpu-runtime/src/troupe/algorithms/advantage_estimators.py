"""`algorithm.advantage` of the GRPO family, a registry by name (the contracts' ADVANTAGE_ESTIMATORS):

- group: each reward against its group's (grpo.group_advantages, normalised by `training.advantageNorm`);
- rae: each reward against its seat's moving-average baseline (rae.py), the seat being (environment, actor);
- hierarchical: proposer–solver (hierarchical.py): the solver against the other answers to the same proposal, the
  proposer paid from those answers and set against the row's other proposals.

An estimator first sees the whole step (`prepare`: hierarchical writes the proposer's reward into the episodes), then
one actor's shares of it, each with its seat, and may keep state across steps (saved in and loaded from checkpoints
by the learner). One that needs a role's turn sampled once for several episodes says so in SHARED_TURNS (the
rollout's `Players.shared_turns`, played by envs/collaborative.py).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

import torch

from ..spec.runspec_types import ActorTraining, Algorithm
from .grpo import group_advantages
from .hierarchical import HierarchicalAdvantages, shared_turns as hierarchical_turns
from .rae import RaeBaselines


class AdvantageEstimator(Protocol):
    def prepare(self, batch: Any) -> None:
        """What the estimator reads from the whole step (every actor's episodes) before any actor's advantages."""
        ...

    def advantages(self, seats: list[str], rewards: list[list[float]], group_size: int, training: ActorTraining) -> torch.Tensor:
        """The advantages of every row of one actor's shares (one list of rewards per share, in order)."""
        ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


EstimatorFactory = Callable[[Algorithm], AdvantageEstimator]
ESTIMATORS: dict[str, EstimatorFactory] = {}


def register_estimator(name: str) -> Callable[[EstimatorFactory], EstimatorFactory]:
    def add(factory: EstimatorFactory) -> EstimatorFactory:
        ESTIMATORS[name] = factory
        return factory

    return add


def build_estimator(algorithm: Algorithm) -> AdvantageEstimator:
    name = algorithm.advantage
    if name not in ESTIMATORS:
        raise ValueError(f"algorithm.advantage: unknown estimator {name!r} (known: {', '.join(sorted(ESTIMATORS))})")
    return ESTIMATORS[name](algorithm)


class GroupAdvantages:
    """Stateless: every reward against its group of `algorithm.groupSize` (groups contiguous across shares)."""

    def prepare(self, batch: Any) -> None:
        pass

    def advantages(self, seats: list[str], rewards: list[list[float]], group_size: int, training: ActorTraining) -> torch.Tensor:
        flat = torch.tensor([r for share in rewards for r in share], dtype=torch.float32)
        return group_advantages(flat, group_size, training.advantage_norm)

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


class RaeAdvantages:
    """Every share against its seat's baseline, which then moves toward the share's mean reward."""

    def __init__(self, decay: float):
        self.baselines = RaeBaselines(decay)

    def prepare(self, batch: Any) -> None:
        pass

    def advantages(self, seats: list[str], rewards: list[list[float]], group_size: int, training: ActorTraining) -> torch.Tensor:
        parts = [self.baselines.advantages(seat, torch.tensor(r, dtype=torch.float32)) for seat, r in zip(seats, rewards)]
        return torch.cat(parts) if parts else torch.zeros(0)

    def state_dict(self) -> dict[str, Any]:
        return {"baselines": dict(self.baselines.values)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.baselines.values = dict(state["baselines"])


register_estimator("group")(lambda algorithm: GroupAdvantages())
register_estimator("rae")(lambda algorithm: RaeAdvantages(float(algorithm.rae.decay)))
register_estimator("hierarchical")(lambda algorithm: HierarchicalAdvantages(algorithm.hierarchical))

# advantage -> role -> block size: roles whose turn is sampled once per block of consecutive episodes of a row.
SHARED_TURNS: dict[str, Callable[[Algorithm], dict[str, int]]] = {"hierarchical": hierarchical_turns}


def shared_turns(algorithm: Algorithm) -> dict[str, int]:
    """The roles whose turns the run's estimator wants shared within blocks ({} for most)."""
    return SHARED_TURNS[algorithm.advantage](algorithm) if algorithm.advantage in SHARED_TURNS else {}
