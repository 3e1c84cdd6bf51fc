"""Where a step's batch comes from: one `RolloutSource` interface, three implementations.

- `SyncRollout` (sync.py): this step's batch is sampled and scored now, in this process.
- `ProducerSource` around the thread producer (async_rollout.py) or the process producer (async_process.py):
  the batch was sampled and scored ahead, up to `algorithm.async.maxStaleness` updates behind.

Either way the loop gets a `StepBatch` (rolled out and scored), and calls the same `quiesce` (around what
draws from the shared RNG: eval, checkpoints), `publish` (the weights after an update), `save_in_flight` and
`close`; for the synchronous source they have nothing to do.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Iterator, Protocol

from ..engines.rollout.colocate import sleep_for_training, wake_for_rollout
from ..envs.protocol import EnvironmentKind
from ..envs.single_turn import EnvRollout
from ..algorithms.training_shares import ConversationPart


@dataclass
class StepBatch:
    """One step's episodes, rolled out and scored: single-turn parts per actor and conversations."""

    parts: dict[str, list[EnvRollout]]
    conversations: list[ConversationPart]
    rollout_seconds: dict[str, float]
    resampling: dict[str, dict[str, float]]  # DAPO dynamic sampling's counts per actor
    staleness: Callable[[], dict[str, float]] = field(default=lambda: {})  # async: how far behind the weights were


class RolloutSource(Protocol):
    def take(self, step: int) -> StepBatch: ...

    def quiesce(self) -> ContextManager[None]: ...

    def publish(self, step: int) -> None: ...

    def save_in_flight(self, folder: Path) -> Any: ...

    def close(self) -> None: ...


@dataclass
class SamplingPlaces:
    """What the sampling phase moves before anything samples: residency, colocated engines, sharded parameters."""

    actors: dict[str, Any]
    environments: list[EnvironmentKind]
    prompts_per_env: list[int]
    residency: Any
    log: Callable[[str, str], Any]
    first_step: int
    # Called once the arrangement is made, before anything samples: the rollout's memory peak starts there (the
    # moves above hold at most the previous phase's state, which that phase measured; #25).
    arranged: Callable[[], Any] = lambda: None

    @contextlib.contextmanager
    def sampling(self, step: int) -> Iterator[None]:
        samplers = [a for env, n in zip(self.environments, self.prompts_per_env) if n > 0 for a in env.actors if a in self.actors]
        self.residency.for_rollout(samplers)
        # A vLLM actor's engine gets its trainer's weights (wake weights -> push -> reset prefix cache -> wake KV
        # cache), then samples from its own copy: the trainer's weights may go back to the host meanwhile.
        for name, synced in wake_for_rollout(self.actors).items():
            if step == self.first_step:
                self.log("info", f'actor "{name}": {synced.tensors} tensors ({synced.bytes / 2**20:.1f} MiB) pushed to its vLLM engine in {synced.seconds:.2f}s')
        self.residency.for_rollout(a for a in samplers if self.actors[a].engine is None)
        self.arranged()
        with contextlib.ExitStack() as gathered:  # sharded actors hold full parameters while they sample
            for actor in self.actors.values():
                if actor.backend is not None and actor.engine is None:
                    gathered.enter_context(actor.backend.sampling())
            yield

    def without(self, names: Iterable[str]) -> SamplingPlaces:
        """These places less the named actors: their engines are someone else's to wake, push to and sleep."""
        gone = set(names)
        return dataclasses.replace(self, actors={n: a for n, a in self.actors.items() if n not in gone})

    def handed_over(self, step: int, report_memory: Callable[[int, str], None]) -> None:
        """A batch sampled elsewhere (a producer, rollout workers) arrived: the rollout and reward phases' memory is
        reported as the synchronous loop reports it, and colocated engines free their memory while the actors train."""
        report_memory(step, "rollout")
        report_memory(step, "reward")
        sleep_for_training(self.actors)


class ProducerSource:
    """The thread or process producer as a `RolloutSource`: its batch was made ahead; here only the places move."""

    def __init__(self, producer: Any, places: SamplingPlaces, report_memory: Callable[[int, str], None]) -> None:
        self.producer, self.report_memory = producer, report_memory
        # Engines the producer samples with (vLLM) are its own to push to, and stay awake: the trainer's phases
        # neither push to them (that would race the producer's generate, with the wrong weights) nor sleep them.
        self.places = places.without(producer.lent)

    def take(self, step: int) -> StepBatch:
        produced = self.producer.take(step)
        with self.places.sampling(step):
            pass
        self.places.handed_over(step, self.report_memory)
        return StepBatch(produced.parts, produced.conversations, produced.rollout_seconds, produced.resampling, produced.staleness)

    def quiesce(self) -> ContextManager[None]:
        return self.producer.quiesce()

    def publish(self, step: int) -> None:
        self.producer.publish(step)  # the weights after this update, for the batch that will be sampled with them

    def save_in_flight(self, folder: Path) -> Any:
        return self.producer.save_in_flight(folder)

    def close(self) -> None:
        self.producer.close()
