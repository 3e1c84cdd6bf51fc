"""`algorithm.advantage: "hierarchical"`: a proposer writes a task, the solver answers it (proposer–solver).

In an environment whose roles include the proposer and the solver (round "proposer -> solver"), each row's
`groupSize` episodes are P = groupSize / S proposals, each answered S = `solverSamples` times: the proposer speaks
once per block of S consecutive episodes and its message is copied into the others (`shared_turns`, read by
envs/collaborative.py), so the S solvers of a block answer the same task. Episodes, groups and the rows machinery
stay as they are: a block is S contiguous rows of the row's group, a proposal is one block.

- solver: its reward against the other answers to the same proposal (GRPO with groups of S);
- proposer: its reward is computed from p, the mean of its block's solver rewards clamped into [0, 1]
  (`proposerReward`, below; "own" keeps the environment's rewards for the proposer), written into the episodes before any advantage (so reports and transcripts show it),
  and its advantage is against the row's P proposals (GRPO over the unique proposals, each then given to the S
  copies of its message: under the GRPO family's mean losses S identical rows weigh what one row would).

The advantages are pure functions of tensors (checked against hand-computed references in
tests/test_hierarchical_advantages.py); the estimator keeps no state across steps.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..spec.runspec_types import ActorTraining, Algorithm, AlgorithmHierarchical
from .grpo import group_advantages

# p -> the proposer's reward; p is the mean of the block's solver rewards, clamped into [0, 1].
PROPOSER_REWARDS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    # Highest (0.25) when the solver succeeds half the time; 0 when it always or never does (nothing to learn).
    "learnability": lambda p: p * (1 - p),
    # Absolute Zero's: the harder the better, but only while still solvable (0 when never or always solved).
    "frontier": lambda p: torch.where((p > 0) & (p < 1), 1 - p, torch.zeros_like(p)),
    # Zero-sum against the solver: unsolvable tasks pay most (a proposer may learn to write nonsense).
    "difficulty": lambda p: 1 - p,
}
# The environment's own rewards for the proposer's role, untouched (a judge of the task, a format check, ...).
OWN = "own"


def solve_rates(solver_rewards: torch.Tensor, samples: int) -> torch.Tensor:
    """p per proposal: the mean of each block of `samples` consecutive solver rewards, clamped into [0, 1]."""
    return solver_rewards.float().view(-1, samples).mean(dim=1).clamp(0.0, 1.0)


def proposer_rewards(solver_rewards: torch.Tensor, samples: int, kind: str) -> torch.Tensor:
    """The proposer's reward of every episode (one per proposal, repeated over its block's `samples` episodes)."""
    if kind not in PROPOSER_REWARDS:
        raise ValueError(f"algorithm.hierarchical.proposerReward: unknown {kind!r} (known: {', '.join(PROPOSER_REWARDS)})")
    return PROPOSER_REWARDS[kind](solve_rates(solver_rewards, samples)).repeat_interleave(samples)


def solver_advantages(rewards: torch.Tensor, samples: int, norm: str) -> torch.Tensor:
    """Each answer against the other answers to its proposal (GRPO with groups of `samples`)."""
    return group_advantages(rewards.float(), samples, norm)


def proposer_advantages(rewards: torch.Tensor, samples: int, group_size: int, norm: str) -> torch.Tensor:
    """Each proposal against the row's other proposals: GRPO over one reward per proposal (its block's first; every
    episode of a block carries the same), then each block's episodes get their proposal's advantage."""
    unique = rewards.float().view(-1, samples)[:, 0]
    return group_advantages(unique, group_size // samples, norm).repeat_interleave(samples)


def role_of(seat: str) -> str:
    """The role of a seat ("environment/role")."""
    return seat.rsplit("/", 1)[-1]


class HierarchicalAdvantages:
    """The estimator (advantage_estimators.py's interface): solver and proposer seats as above, any other seat
    (another environment the actor plays in) as GRPO's group."""

    def __init__(self, settings: AlgorithmHierarchical):
        self.settings = settings

    def prepare(self, batch: Any) -> None:
        """The proposer's reward of every proposer–solver episode, from its block's solver rewards (unless "own")."""
        s = self.settings
        if s.proposer_reward == OWN:
            return
        for conv in batch.conversations:
            episodes = conv.episodes
            if not episodes or s.proposer not in episodes[0].rewards or s.solver not in episodes[0].rewards:
                continue
            paid = proposer_rewards(torch.tensor([e.rewards[s.solver] for e in episodes]), s.solver_samples, s.proposer_reward)
            for e, value in zip(episodes, paid.tolist()):
                e.rewards[s.proposer] = value
                e.components[s.proposer] = {f"hierarchical/{s.proposer_reward}": value}

    def advantages(self, seats: list[str], rewards: list[list[float]], group_size: int, training: ActorTraining) -> torch.Tensor:
        s, norm = self.settings, training.advantage_norm
        parts = []
        for seat, share in zip(seats, rewards):
            r = torch.tensor(share, dtype=torch.float32)
            role = role_of(seat)
            if role == s.solver:
                parts.append(solver_advantages(r, s.solver_samples, norm))
            elif role == s.proposer:
                parts.append(proposer_advantages(r, s.solver_samples, group_size, norm))
            else:
                parts.append(group_advantages(r, group_size, norm))
        return torch.cat(parts) if parts else torch.zeros(0)

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


def shared_turns(algorithm: Algorithm) -> dict[str, int]:
    """role -> block size: the proposer speaks once per `solverSamples` consecutive episodes of a row."""
    return {algorithm.hierarchical.proposer: int(algorithm.hierarchical.solver_samples)}

