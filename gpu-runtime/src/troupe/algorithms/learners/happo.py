"""happo: MAPPO's centralised critic and GAE advantages, with HAPPO's sequential update (happo_math.py).

Every step the trainable actors are updated one at a time in an order drawn from a seeded RNG (its state is in
the checkpoint, so a resumed run draws the same orders). Before an actor's update each of its rows (an episode of
a conversation) has its advantages multiplied by the factor of that episode: the product of the new/old
probability ratios of the actors updated before it this step, each measured right after its update on its own
messages of the episode. The factor starts at 1 every step.
"""

from __future__ import annotations

import random
from typing import Any

import torch

from ...engines.rollout.sampling import Rollout
from ...engines.train.policy import completion_logprobs
from ..happo_math import happo_factor, sequence_log_ratio
from ..learner_base import LearnerSetup, register_learner
from ..on_policy import OnPolicyLearner
from ..training_shares import Share

EpisodeKey = tuple[int, int]  # (conversation part of the step, episode in it)


def episode_keys(name: str, conversations: list[Any]) -> list[EpisodeKey]:
    """The episode of each of the actor's rows, in training_shares.actor_shares' order."""
    return [(c, i) for c, conv in enumerate(conversations) if name in conv.env.actors for i in range(len(conv.episodes))]


@register_learner("happo")
class HappoLearner(OnPolicyLearner):
    def __init__(self, setup: LearnerSetup) -> None:
        super().__init__(setup)
        self.rng = random.Random(setup.run.seed)
        self.factor_clip = float(setup.run.algorithm.happo.factor_clip)
        self.factors: dict[EpisodeKey, float] = {}
        self.position = 0

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "happo_order_rng": self.rng.getstate()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.rng.setstate(state["happo_order_rng"])

    def prepare(self, step: int, batch: Any) -> None:
        super().prepare(step, batch)
        self.factors, self.position = {}, 0

    def order(self, step: int) -> list[str]:
        names = super().order(step)
        self.rng.shuffle(names)
        return names

    def update(self, step: int, name: str, actor: Any, shares: list[Share], rows: Rollout, mask: torch.Tensor, advantages: torch.Tensor, batch: Any) -> dict[str, float]:
        keys = episode_keys(name, batch.conversations)
        if len(keys) != rows.completion_ids.shape[0]:
            raise RuntimeError(f'happo: actor "{name}" has {rows.completion_ids.shape[0]} rows and {len(keys)} episodes (happo trains on collaborative environments only)')
        factor = torch.tensor([self.factors.get(k, 1.0) for k in keys], dtype=torch.float32, device=advantages.device)
        m = mask.to(torch.float32)
        old = self._logprobs(actor, rows)
        result = super().update(step, name, actor, shares, rows, mask, advantages * factor.unsqueeze(1), batch)
        after = happo_factor(factor, sequence_log_ratio(self._logprobs(actor, rows), old, m), self.factor_clip)
        for k, f in zip(keys, after.tolist()):
            self.factors[k] = f
        self.position += 1
        return {
            **result,
            "happo/order": float(self.position),  # 1: updated first this step
            "happo/factor_mean": float(factor.mean()),
            "happo/factor_min": float(factor.min()),
            "happo/factor_max": float(factor.max()),
        }

    @staticmethod
    def _logprobs(actor: Any, rows: Rollout) -> torch.Tensor:
        with torch.no_grad():
            return completion_logprobs(actor.loaded.model, rows, actor.temperature)[0].float()
