"""The synchronous rollout source: this step's batch, sampled and scored now with the actors' latest weights.

Roll out: each environment draws its prompts; a single-turn environment's actor samples `groupSize`
completions per prompt (single_turn.py), a conversation plays its round spec's turns with every actor's
engine (collaborative.py, acting.py). Score: completions and conversations by their rewards, then DAPO's
dynamic sampling replaces groups whose rewards are all equal.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, ContextManager

from ..algorithms.training_shares import ConversationPart
from ..engines.rollout.colocate import engine_of, sleep_for_training
from ..envs.collaborative import CollaborativeEnvironment, schedule_seed
from ..envs.single_turn import EnvRollout, draw_single_turn, refill_groups, score_single_turn
from ..schedule import sample as dsl_sample
from .source import SamplingPlaces, StepBatch


class SyncRollout:
    def __init__(
        self, spec: dict[str, Any], places: SamplingPlaces, api_actors: dict[str, Any], device: Any, report_memory: Callable[[int, str], None]
    ) -> None:
        self.spec, self.places, self.api_actors, self.device, self.report_memory = spec, places, api_actors, device, report_memory

    def take(self, step: int) -> StepBatch:
        spec, actors, device = self.spec, self.places.actors, self.device
        group_size = spec["algorithm"]["groupSize"]
        parts: dict[str, list[EnvRollout]] = defaultdict(list)
        conversations: list[ConversationPart] = []
        rollout_seconds: dict[str, float] = defaultdict(float)
        with self.places.sampling(step):
            for env, n_prompts in zip(self.places.environments, self.places.prompts_per_env):
                if n_prompts == 0:
                    continue
                if isinstance(env, CollaborativeEnvironment):
                    conversations.append(self._play(env, n_prompts, step, rollout_seconds))
                    continue
                t0 = time.monotonic()
                parts[env.actor].append(draw_single_turn(env, actors[env.actor], n_prompts, group_size, device))
                rollout_seconds[env.actor] += time.monotonic() - t0
        self.report_memory(step, "rollout")

        overlong = spec["algorithm"]["overlong"]
        for name, env_parts in parts.items():
            for part in env_parts:
                score_single_turn(part, group_size, overlong, int(actors[name].spec["sampling"]["maxNewTokens"]))
        for conv in conversations:
            conv.env.score_all(conv.episodes)
        # DAPO dynamic sampling: groups with equal rewards are replaced by freshly drawn prompts.
        resampling: dict[str, dict[str, float]] = {}
        dynamic = spec["algorithm"]["dynamicSampling"]
        if dynamic["enabled"]:
            for name, env_parts in parts.items():
                counts: dict[str, float] = defaultdict(float)
                for k, part in enumerate(env_parts):
                    env_parts[k], part_counts = refill_groups(part, actors[name], group_size, int(dynamic["maxRounds"]), overlong, device)
                    for key, value in part_counts.items():
                        counts[key] += value
                rollout_seconds[name] += counts.pop("seconds", 0.0)
                resampling[name] = {f"dynamic_sampling/{key}": value for key, value in counts.items()}
        self.report_memory(step, "reward")
        sleep_for_training(actors)  # colocated engines free their memory while the actors train (after dynamic sampling's draws)
        return StepBatch(parts, conversations, rollout_seconds, resampling)

    def _play(self, env: CollaborativeEnvironment, n_prompts: int, step: int, rollout_seconds: dict[str, float]) -> ConversationPart:
        """A conversation environment's groups: each episode's turns from the round spec, played with every actor's engine."""
        actors, api_actors, seed = self.places.actors, self.api_actors, self.spec["seed"]
        group_size = self.spec["algorithm"]["groupSize"]
        row_indices = env.sampler.take(n_prompts)
        tokenizers = {a: actors[a].loaded.tokenizer if a in actors else None for a in env.actors}
        episodes = []
        for g, r in enumerate(row_indices):
            for s in range(group_size):
                turns = dsl_sample(env.node, schedule_seed(seed, env.name, step, g, s), env.actors, env.spec["maxTurns"]) if env.node is not None else []
                episodes.append(env.new_episode(env.dataset.rows[r], r, g, s, turns, tokenizers))
        seconds = env.play(
            episodes,
            {a: engine_of(actors[a]) if a in actors else api_actors[a] for a in env.actors},
            tokenizers,
            {a: actors[a].spec["sampling"] if a in actors else api_actors[a].sampling for a in env.actors},
            self.device,
        )
        for a, sec in seconds.items():
            rollout_seconds[a] += sec
        return ConversationPart(env, row_indices, episodes)

    def quiesce(self) -> ContextManager[None]:
        return contextlib.nullcontext()

    def publish(self, step: int) -> None:
        """The next batch is sampled with the trainer's own weights: nothing to hand over."""

    def save_in_flight(self, folder: Path) -> None:
        """Nothing is in flight between steps."""

    def close(self) -> None:
        """Nothing to stop."""
