"""A step's rollout and reward phases, once, for every rollout source (sync.py, the thread and process producers).

    roll_out_step   every environment with prompts this step plays its share (environment protocol, protocol.py),
                    in spec order: the order of random draws is the run's
    score_step      every share scored: single-turn parts (per actor, in the order the actors first sampled),
                    then conversations; then DAPO's dynamic sampling refills single-turn groups whose rewards
                    are all equal

Nothing here asks which kind an environment is: each share says where its episodes go (`add_to`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..algorithms.advantage_estimators import shared_turns
from ..algorithms.training_shares import ConversationPart
from ..envs.protocol import EnvironmentKind, Players, Share
from ..envs.single_turn import EnvRollout, refill_groups
from ..spec.runspec_types import Algorithm, AlgorithmDynamicSampling, to_dict


@dataclass
class CollectedStep:
    """The step's shares as the learners read them: single-turn parts per actor, conversations, rollout seconds."""

    parts: dict[str, list[EnvRollout]] = field(default_factory=lambda: defaultdict(list))
    conversations: list[ConversationPart] = field(default_factory=list)
    rollout_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add_single_turn(self, part: EnvRollout) -> None:
        self.parts[part.env.actor].append(part)

    def add_conversations(self, env: EnvironmentKind, row_indices: list[int], episodes: Sequence[Any]) -> None:
        self.conversations.append(ConversationPart(env, row_indices, list(episodes)))  # type: ignore[arg-type]


def roll_out_step(environments: Sequence[EnvironmentKind | None], prompts_per_env: Sequence[int], players: Players, step: int) -> tuple[CollectedStep, list[Share]]:
    """Every environment's share of step `step` (None or 0 prompts: nothing), and the shares in scoring order."""
    collected = CollectedStep()
    shares: list[Share] = []
    for env, n_prompts in zip(environments, prompts_per_env):
        if env is None or n_prompts == 0:
            continue
        share = env.roll_out(players, n_prompts, step, collected.rollout_seconds)
        share.add_to(collected)
        shares.append(share)
    return collected, scoring_order(collected, shares)


def scoring_order(collected: CollectedStep, shares: list[Share]) -> list[Share]:
    """Single-turn parts grouped by actor, then conversations: the order rewards have always been called in (a
    judge reward samples, so the order is part of the run)."""
    singles: list[Share] = [p for ps in collected.parts.values() for p in ps]
    seen = {id(p) for p in singles}
    return singles + [s for s in shares if id(s) not in seen]


def score_step(
    collected: CollectedStep, shares: list[Share], players: Players, dynamic: AlgorithmDynamicSampling | Mapping[str, Any]
) -> dict[str, dict[str, float]]:
    """Scores every share, then DAPO dynamic sampling (`algorithm.dynamicSampling`, typed; its document is read
    too): groups with equal rewards are replaced by freshly drawn prompts. Returns its counts per actor (refill
    seconds go to rollout seconds)."""
    if not isinstance(dynamic, AlgorithmDynamicSampling):
        dynamic = AlgorithmDynamicSampling.from_dict(dynamic)
    for share in shares:
        share.score(players)
    resampling: dict[str, dict[str, float]] = {}
    if dynamic.enabled:
        for name, env_parts in collected.parts.items():
            counts: dict[str, float] = defaultdict(float)
            for k, part in enumerate(env_parts):
                env_parts[k], part_counts = refill_groups(part, players.actors[name], players.group_size, dynamic.max_rounds, dict(players.overlong))
                for key, value in part_counts.items():
                    counts[key] += value
            collected.rollout_seconds[name] += counts.pop("seconds", 0.0)
            resampling[name] = {f"dynamic_sampling/{key}": value for key, value in counts.items()}
    return resampling


def players_of(algorithm: Algorithm, seed: int, actors: Mapping[str, Any], api_actors: Mapping[str, Any]) -> Players:
    """The step's players from the typed algorithm section and the run's seed (the loop's actors, or a producer's
    sampling copies). The environments read `overlong` as its document (envs/)."""
    return Players(actors, api_actors, seed, algorithm.group_size, to_dict(algorithm.overlong), shared_turns(algorithm))
