"""The synchronous rollout source: this step's batch, sampled and scored now with the actors' latest weights.

Roll out: every environment plays its share through the environment protocol (envs/protocol.py; a single-turn
environment's actor samples `groupSize` completions per prompt, a conversation plays its turns with every
actor's engine). Score: every share by its rewards, then DAPO's dynamic sampling replaces groups whose rewards
are all equal. Both phases are collect.py's, which the asynchronous producers run too.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Callable, ContextManager

from ..engines.rollout.colocate import sleep_for_training
from ..spec.runspec_types import Algorithm
from .collect import players_of, roll_out_step, score_step
from .source import SamplingPlaces, StepBatch


class SyncRollout:
    def __init__(
        self, algorithm: Algorithm, seed: int, places: SamplingPlaces, api_actors: dict[str, Any], report_memory: Callable[[int, str], None] = lambda step, phase: None
    ) -> None:
        """The typed algorithm section and the run's seed; every actor samples on its own device."""
        self.algorithm, self.places, self.report_memory = algorithm, places, report_memory
        self.players = players_of(algorithm, seed, places.actors, api_actors)

    def take(self, step: int) -> StepBatch:
        with self.places.sampling(step):
            collected, shares = roll_out_step(self.places.environments, self.places.prompts_per_env, self.players, step)
        self.report_memory(step, "rollout")
        resampling = score_step(collected, shares, self.players, self.algorithm.dynamic_sampling)
        self.report_memory(step, "reward")
        sleep_for_training(self.places.actors)  # colocated engines free their memory while the actors train (after dynamic sampling's draws)
        return StepBatch(collected.parts, collected.conversations, collected.rollout_seconds, resampling)

    def quiesce(self) -> ContextManager[None]:
        return contextlib.nullcontext()

    def publish(self, step: int) -> None:
        """The next batch is sampled with the trainer's own weights: nothing to hand over."""

    def save_in_flight(self, folder: Path) -> None:
        """Nothing is in flight between steps."""

    def close(self) -> None:
        """Nothing to stop."""
