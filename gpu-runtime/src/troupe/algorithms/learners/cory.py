"""cory: CORY (Ma et al. 2024, "Coevolving with the other you"): two copies of one base model, a pioneer and an
observer, trained together with GRPO's loss.

In Troupe a CORY pair is a collaborative environment whose roles are `pioneer` and `observer` (environments[].roles),
played by two trainable actors of one base with the round `pioneer -> observer`, so the observer answers having read
the pioneer's answer (spec/cory_rules.py refuses anything else by field). What this learner adds to GRPO:

- the collective reward: each role's advantages come from the sum of both roles' rewards of the episode (the
  paper's), so the pioneer is paid for answers the observer can build on, and the observer for getting it right;
  the reported rewards stay each role's own (`role/pioneer/reward`, `role/observer/reward`: their accuracies);
- the role exchange: every `algorithm.cory.swapEvery` steps the two actors trade roles (envs/roles.py
  `RoleExchange`), so each learns both to answer alone and to answer from the other's answer. The exchange is
  applied after a step's update, before the next step's rollout (synchronous rollouts only: the rules refuse
  `algorithm.async` and `rollout.workers`); the step's own episodes keep the map they were played with.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from ...envs.roles import RoleExchange, as_played, play_roles_at, roles_of
from ...models.lora import has_lora
from ..learner_base import LearnerSetup, Updates, register_learner
from ..names import CORY_ROLES
from ..on_policy import OnPolicyLearner, seats
from ..training_shares import Share


def share_initial_weights(source: Any, target: Any) -> None:
    """`target`'s parameters (and its KL reference's) set to `source`'s, in place (optimizers keep their tensors)."""
    with torch.no_grad():
        for dst, src in zip(target.loaded.model.parameters(), source.loaded.model.parameters(), strict=True):
            dst.copy_(src)
        if target.reference is not None and source.reference is not None:
            for dst, src in zip(target.reference.parameters(), source.reference.parameters(), strict=True):
                dst.copy_(src)
    target.engine_stale = True


def one_base(actors: dict[str, Any], environments: Sequence[Any]) -> list[tuple[str, str]]:
    """Each CORY pair whose actors are built from a `tiny` preset (random weights, not loaded ones): the observer's
    actor starts from the pioneer's weights. Returns the (pioneer, observer) actors it copied."""
    copied = []
    for env in environments:
        mapped = roles_of(env)
        pioneer, observer = (actors.get(mapped.get(role, "")) for role in CORY_ROLES)
        if pioneer is None or observer is None or pioneer is observer:
            continue
        tiny = all(a.spec["model"].get("source") == "tiny" and not has_lora(a.loaded.model) for a in (pioneer, observer))
        if tiny and pioneer.spec["model"] == observer.spec["model"]:  # one preset (the rules refuse two)
            share_initial_weights(pioneer, observer)
            copied.append((pioneer.name, observer.name))
    return copied


def collective_rewards(episodes: Sequence[Any], roles: Sequence[str]) -> list[float]:
    """Per episode, the sum of `roles`' rewards (CORY's collective reward)."""
    return [float(sum(e.rewards[r] for r in roles)) for e in episodes]


@register_learner("cory")
class CoryLearner(OnPolicyLearner):
    def __init__(self, setup: LearnerSetup) -> None:
        super().__init__(setup)
        self.exchange = RoleExchange((CORY_ROLES[0], CORY_ROLES[1]), int(setup.run.algorithm.cory.swap_every))
        self.pairs = [env for env in setup.environments if set(CORY_ROLES) <= set(roles_of(env))]
        self.next_step = 1  # the step the environments' roles are set for
        self.collective: dict[str, list[float]] = {}  # seat ("environment/role") -> this step's collective rewards
        for pioneer, observer in one_base(setup.actors, self.pairs):
            setup.log("info", f'cory: "{observer}" starts from the weights of "{pioneer}" (a tiny preset: one base for the pair)')

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "cory_next_step": self.next_step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.play(int(state["cory_next_step"]))

    def play(self, step: int) -> None:
        """Every CORY environment's roles as the exchange gives them for `step` (before its rollout)."""
        self.next_step = step
        for env in self.pairs:
            play_roles_at(env, self.exchange, step)

    # ------------------------------------------------------------------ phases
    def _is_pair(self, env: Any) -> bool:
        return any(env is p for p in self.pairs)

    def prepare(self, step: int, batch: Any) -> None:
        super().prepare(step, batch)
        self.collective = {}
        for conv in batch.conversations:
            if self._is_pair(conv.env):
                total = collective_rewards(conv.episodes, CORY_ROLES)
                for role in CORY_ROLES:
                    self.collective[f"{conv.env.name}/{role}"] = total

    def group_advantages(self, name: str, shares: list[Share], batch: Any) -> torch.Tensor:
        """GRPO's advantages, each CORY role's rows on the episode's collective reward (other shares on their own)."""
        seat_names = seats(name, batch.parts[name], batch.conversations)
        rewards = [self.collective.get(seat, sh.rewards) for seat, sh in zip(seat_names, shares)]
        return self.estimator.advantages(seat_names, rewards, self.algorithm.group_size, self.actors[name].section.training)

    def learn(self, step: int, batch: Any) -> tuple[Updates, dict[str, list[Share]]]:
        updates, shares_of = super().learn(step, batch)
        swapped = float(self.exchange.swapped(step))
        for conv in batch.conversations:
            if not self._is_pair(conv.env):
                continue
            mapped = roles_of(conv.env)
            totals = collective_rewards(conv.episodes, CORY_ROLES)
            for role in CORY_ROLES:
                actor = mapped[role]
                if actor in updates:
                    updates[actor]["cory/collective_reward"] = sum(totals) / max(len(totals), 1)
                    updates[actor]["cory/plays_pioneer"] = float(role == CORY_ROLES[0])
                    updates[actor]["cory/swapped"] = swapped
            # The report reads this step's episodes with the roles they were played with, after the exchange below.
            conv.env = as_played(conv.env)
        self.play(step + 1)
        return updates, shares_of
