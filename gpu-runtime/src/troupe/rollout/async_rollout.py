"""Asynchronous rollouts (`algorithm.async.maxStaleness: K`): a producer thread samples and scores the next
batches while the trainer trains on the current one. (On a CPU host with K >= 1 the producer is a process
instead, async_process.py: same schedule, same batches; this module holds what both share.)

The producer samples from its own copy of each trainable actor's module (an `HFEngine` on the copy), never
from the module the trainer is updating. Staleness is fixed, not "whatever was freshest": the batch of step t
is sampled with the weights after exactly max(b, t - 1 - K) updates (b: the updates done when the run
(re)started), so a batch is never more than K updates older than the policy it trains, and a run is the
same run however the two threads' timing falls (a fixed seed gives the same steps; resume is exact).

    trainer thread                              producer thread
    take(t): wait for batch t                   for t = next, next + 1, ...: wait until the weights of
    update with it                                version max(b, t - 1 - K) are published, load them into
    publish(t): snapshot of the new weights       the copies, sample + score + dynamic sampling, hand over
    eval / checkpoint under quiesce()           (at most K + 1 batches beyond the trainer's step)

K = 0: batch t is sampled after update t - 1 is published, from a copy holding exactly those weights: the
synchronous loop's order of random draws, so the same metrics bit for bit.

Random draws: sampling uses torch's global generator, which both threads share. Only the producer draws from
it while it runs; anything in the trainer thread that samples (evaluation) or records the generator's state
(a checkpoint) first waits in `quiesce()` until the producer has made every batch it may make and is idle.
Dropout in the trained model would also draw from it during the update; the tiny presets and the
Qwen2/Llama configs we build have none (a model with dropout makes async runs depend on timing).

Checkpoints: batches made but not yet trained on are saved beside the checkpoint (`in_flight.pt`), with the
RNG state after them; a resumed run trains on them first, then continues from that RNG state.

Several ranks: every rank runs its own producer (thread or process), as every rank of the synchronous loop
samples the step's batch; rank 0's batch is the one every rank trains on (on_policy.py broadcasts it), the
schedule is the same on every rank, and each rank saves its own in-flight file (`in_flight_file`). A sharded
actor's copy and every publish go through its gathered full parameters (full_weights.py), a collective the
ranks join at the same point of the loop.

vLLM actors (`backend: "vllm"`, `vllm.sleepLevel: 0`): their engine is not copied but lent to the producer
(`lent_engines`), which samples with it from its own thread; the engine stays awake while the actor trains (it
holds its own weights and KV cache). `publish` snapshots the trainer's full weights (LoRA merged) on the trainer's
device, and the producer pushes them through vLLM's native weight sync (start_weight_update -> update_weights ->
finish_weight_update, engines/rollout/sync.py `push`) at the same points where it loads a copy's weights: between
two batches, in the thread that calls `generate`, so no push overlaps a generate (the offline `LLM.generate`
returns only when every request is done: nothing is in flight to pause). The trainer itself pushes only under
`quiesce` (evaluation: the latest weights), when the producer cannot start its next batch: that batch waits for a
newer version, which the producer pushes first (`_check_engines` fails the run if the schedule ever broke this).
Memory: the engine stays resident (its gpuMemoryUtilization share), and each published snapshot is a full copy of
the weights on the trainer's device until the producer has pushed it (at most K + 1 of them).
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import torch

from ..models.loading import LoadedModel
from ..engines.rollout import HFEngine
from ..engines.rollout.colocate import colocated, trainer_weights
from ..engines.rollout.sync import push
from ..models.shared_lora import AdapterBound
from ..envs.single_turn import EnvRollout
from ..algorithms.training_shares import ConversationPart
from ..spec.runspec_types import Algorithm
from .collect import players_of, roll_out_step, score_step
from .full_weights import plain_copy, shards, trained_tensors

if TYPE_CHECKING:
    from ..actors import Actor

IN_FLIGHT_FILE = "in_flight.pt"


def in_flight_file(rank: int) -> str:
    """Each rank's producer saves its own batches in flight and position (rank 0's file keeps the one-rank name)."""
    return IN_FLIGHT_FILE if rank == 0 else f"in_flight.rank{rank}.pt"


@dataclass
class ProducedBatch:
    """What the rollout and reward phases of step `step` produce: each trainable actor's single-turn parts and
    the multi-turn environments' conversations (whole episodes: every turn of every actor), scored (single-turn
    parts refilled by dynamic sampling); `version` = updates the sampling weights had seen."""

    step: int
    version: int
    parts: dict[str, list[EnvRollout]]
    rollout_seconds: dict[str, float]
    resampling: dict[str, dict[str, float]]
    conversations: list[ConversationPart] = dataclasses.field(default_factory=list)

    def staleness(self) -> dict[str, float]:
        """In updates: the policy trained at step t has seen t - 1. Every sample of a batch has the same age (one
        weights version per batch, every turn of every conversation included); each trained actor's metric event
        reports it, so staleness is per actor."""
        lag = float(self.step - 1 - self.version)
        return {"staleness/mean": lag, "staleness/max": lag}


def produce_batch(
    step: int, version: int, algorithm: Algorithm, seed: int, environments: list[Any], prompts_per_env: list[int], samplers: dict[str, "Actor"]
) -> ProducedBatch:
    """The synchronous source's rollout and reward phases (collect.py), with the producer's sampling copies."""
    players = players_of(algorithm, seed, samplers, {})
    collected, shares = roll_out_step(environments, prompts_per_env, players, step)
    resampling = score_step(collected, shares, players, algorithm.dynamic_sampling)
    return ProducedBatch(step, version, collected.parts, collected.rollout_seconds, resampling, collected.conversations)


def max_staleness(algorithm: Algorithm) -> int:
    """`algorithm.async.maxStaleness`: how many updates a batch may lag (the producers exist only with it set)."""
    assert algorithm.async_ is not None, "an asynchronous producer needs algorithm.async"
    return algorithm.async_.max_staleness


def _raw(model: Any) -> torch.nn.Module:
    """The module itself (a shared-base LoRA actor's `AdapterBound` is a view of the shared module)."""
    return object.__getattribute__(model, "_shared") if isinstance(model, AdapterBound) else model


def lent_engines(actors: dict[str, "Actor"]) -> set[str]:
    """The actors whose own engine (vLLM) the producer samples with, trainable or not: the loop's wake/sleep
    leave them to it (rollout/source.py `ProducerSource`)."""
    return {a.name for a in colocated(actors)}


def sampling_copies(actors: dict[str, "Actor"], work_dir: Path | None = None) -> dict[str, "Actor"]:
    """Each actor as the producer sees it: trainable actors on a copy of their module (one copy per shared
    base; a sharded actor's rebuilt and filled with its gathered parameters, full_weights.py, which needs the
    run folder `work_dir`), with an `HFEngine` on it; frozen actors and actors with their own engine (vLLM, which
    gets the weights pushed instead) as they are."""
    memo: dict[int, Any] = {}
    out: dict[str, Actor] = {}
    lent = lent_engines(actors)
    for name, actor in actors.items():
        if not actor.trainable or name in lent:
            out[name] = actor
            continue
        model = actor.loaded.model
        # requires_grad stays as the trainer's: CPU kernels differ for parameters without it (the sampler's
        # log-probs moved by ~5e-7, measured), and K = 0 must sample exactly what the synchronous loop does.
        if shards(actor):
            assert work_dir is not None, "a sharded actor's sampling copy is rebuilt from its spec: pass the run folder"
            raw = plain_copy(actor, work_dir)
        else:
            raw = copy.deepcopy(_raw(model), memo)
        module = (
            AdapterBound(raw, object.__getattribute__(model, "_troupe_adapter"), object.__getattribute__(model, "_troupe_lora_config"))
            if isinstance(model, AdapterBound)
            else raw
        )
        loaded = LoadedModel(module, actor.loaded.tokenizer, actor.loaded.description)  # type: ignore[arg-type]
        out[name] = dataclasses.replace(actor, loaded=loaded, engine=HFEngine(module, actor.loaded.tokenizer, actor.device), reference=None)
    return out


class RolloutProducer:
    """The producer thread and its hand-over with the trainer (see the module docstring)."""

    def __init__(
        self,
        algorithm: Algorithm,
        seed: int,
        total_steps: int,
        environments: list[Any],
        prompts_per_env: list[int],
        actors: dict[str, "Actor"],
        first_step: int,
        queued: list[ProducedBatch] | None = None,
        work_dir: Path | None = None,
        rank: int = 0,
    ):
        """The typed algorithm section (its `async_` set), the run's seed and `trainer.steps`; each actor samples
        on its own device. With several ranks each rank runs one (`rank`: whose in-flight file it writes); a
        sharded actor's copy is rebuilt in `work_dir`'s run and every publish gathers (full_weights.py)."""
        self.rank = rank
        self.algorithm, self.seed, self.environments, self.prompts_per_env = algorithm, seed, environments, prompts_per_env
        self.max_staleness = max_staleness(algorithm)
        self.total_steps = total_steps
        self.actors = actors
        self.lent = lent_engines(actors)
        self.samplers = sampling_copies(actors, work_dir)
        # Each trainable lent engine gets the weights of version b now, from this thread before the producer's
        # starts (the engine loaded the model folder; a resumed trainer is past it), and its push count is kept:
        # see `_check_engines`.
        self._engine_pushes: dict[str, int] = {}
        for name in self._pushed_engines():
            self._engine_pushes[name] = self._push(name, trainer_weights(actors[name]))
        queued = sorted(queued or [], key=lambda b: b.step)
        if [b.step for b in queued] != list(range(first_step, first_step + len(queued))):
            raise ValueError(f"in-flight batches {[b.step for b in queued]} do not continue from step {first_step}")
        self._ready: dict[int, ProducedBatch] = {b.step: b for b in queued}
        self._base = first_step - 1  # updates done at (re)start: what the copies hold now
        self._loaded = self._base
        self._next = first_step + len(queued)
        self._published: dict[int, dict[int | str, Any]] = {}
        self._busy = self._held = self._closing = False
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._threads = torch.get_num_threads()  # OpenMP's thread count is per thread: the producer's must match
        self._thread = threading.Thread(target=self._run, name="troupe-rollout-producer", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ trainer side
    def take(self, step: int) -> ProducedBatch:
        with self._cond:
            while step not in self._ready and self._error is None:
                self._cond.wait()
            if self._error is not None:
                raise RuntimeError(f"the rollout producer failed while sampling step {self._next}: {self._error}") from self._error
            batch = self._ready.pop(step)
        assert 0 <= step - 1 - batch.version <= self.max_staleness, (step, batch.version)
        return batch

    def publish(self, version: int) -> None:
        """After update `version`: a snapshot of the trained weights, for the batch that will use them."""
        if version + 1 + self.max_staleness > self.total_steps:
            return  # no batch will be sampled with it
        snapshot: dict[int | str, Any] = {name: _snapshot_of(self.actors[name]) for name in self._pushed_engines()}
        for actor in self.actors.values():
            if actor.trainable and actor.name not in self.lent:
                raw = _raw(actor.loaded.model)
                if id(raw) in snapshot:
                    continue
                if shards(actor):  # gathered (a collective; fresh tensors): its trained parameters, loaded non-strictly
                    snapshot[id(raw)] = trained_tensors(actor)
                else:
                    snapshot[id(raw)] = {k: v.detach().clone() for k, v in raw.state_dict().items()}
        with self._cond:
            self._published[version] = snapshot
            self._cond.notify_all()

    @contextmanager
    def quiesce(self) -> Iterator[None]:
        """Waits until the producer has made every batch it may make and is idle, and keeps it idle: for
        whatever in the trainer thread draws from or records the shared RNG (evaluation, checkpoints)."""
        with self._cond:
            while (self._busy or self._can_start()) and self._error is None:
                self._cond.wait()
            self._held = True
        try:
            yield
        finally:
            with self._cond:
                self._held = False
                self._cond.notify_all()

    def save_in_flight(self, folder: Path) -> int:
        """Under `quiesce`: the batches made but not yet trained on, beside a checkpoint. Returns how many."""
        with self._cond:
            batches = [self._ready[s] for s in sorted(self._ready)]
        saved = [batch_state(b, self.environments) for b in batches]
        name = in_flight_file(self.rank)
        partial = folder / f".{name}.partial"
        torch.save({"batches": saved}, partial)
        partial.rename(folder / name)
        return len(saved)

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()

    # ------------------------------------------------------------------ producer side
    def _needed(self, step: int) -> int:
        return max(self._base, step - 1 - self.max_staleness)

    def _can_start(self) -> bool:
        if self._next > self.total_steps:
            return False
        needed = self._needed(self._next)
        return needed == self._loaded or needed in self._published

    def _run(self) -> None:
        # The trainer's intra-op thread count (trainer.cpuThreads): another count sums in another order, and the
        # sampler's log-probs would differ from the synchronous loop's in their last bits.
        torch.set_num_threads(self._threads)
        while True:
            with self._cond:
                while not self._closing and (self._held or not self._can_start()):
                    self._cond.wait()
                if self._closing:
                    return
                step, version = self._next, self._needed(self._next)
                snapshot = self._published.pop(version, None) if version != self._loaded else None
                for old in [v for v in self._published if v < version]:
                    del self._published[old]
                self._busy = True
            try:
                if snapshot is not None:
                    self._load(snapshot)
                    self._loaded = version
                self._check_engines()
                batch = produce_batch(step, version, self.algorithm, self.seed, self.environments, self.prompts_per_env, self.samplers)
            except BaseException as e:  # handed to the trainer thread by take()
                with self._cond:
                    self._error, self._busy = e, False
                    self._cond.notify_all()
                return
            with self._cond:
                self._ready[step] = batch
                self._next, self._busy = step + 1, False
                self._cond.notify_all()

    def _pushed_engines(self) -> list[str]:
        """Lent engines of trainable actors: the ones that get the trainer's weights."""
        return [n for n in sorted(self.lent) if self.actors[n].trainable]

    def _push(self, name: str, weights: Any) -> int:
        """vLLM's native weight sync to the actor's engine (engines/rollout/sync.py); its push count after."""
        engine = self.actors[name].engine
        assert engine is not None
        push(engine, iter(weights))
        return int(getattr(engine, "pushes"))

    def _check_engines(self) -> None:
        """Before a batch: each lent engine still holds the version the producer pushed. The trainer pushes only
        under `quiesce` (evaluation), which it enters only when the producer cannot start its next batch, and that
        batch always waits for a version published later, which the producer pushes first; so a mismatch here is
        a broken schedule, and sampling on would train on the wrong weights' log-probs."""
        for name, pushes in self._engine_pushes.items():
            now = getattr(self.actors[name].engine, "pushes")
            if now != pushes:
                raise RuntimeError(f'actor "{name}": its vLLM engine was pushed other weights ({now - pushes} push(es)) since the producer pushed version {self._loaded}')

    def _load(self, snapshot: dict[int | str, Any]) -> None:
        """In the producer thread, between batches (no generate in flight): lent engines get the version pushed,
        copies have it loaded."""
        for name in self._engine_pushes:
            self._engine_pushes[name] = self._push(name, snapshot[name])
            snapshot[name] = None  # the engine holds it now: the clone is released
        done: set[int] = set()
        with torch.no_grad():
            for name, actor in self.actors.items():
                if not actor.trainable or name in self.lent:
                    continue
                source, target = _raw(actor.loaded.model), _raw(self.samplers[name].loaded.model)
                if id(source) in done:
                    continue
                target.load_state_dict(snapshot[id(source)], strict=not shards(actor))
                done.add(id(source))


def _snapshot_of(actor: "Actor") -> list[tuple[str, torch.Tensor]]:
    """The trainer's full weights for a vLLM push (Hugging Face names, LoRA merged), cloned on its device: the
    trainer goes on updating them while the producer samples."""
    return [(name, tensor.detach().clone()) for name, tensor in trainer_weights(actor)]


def batch_state(batch: ProducedBatch, environments: list[Any]) -> dict[str, Any]:
    """A batch as plain data (environments by position): for `in_flight.pt` and the producer process's queue."""
    envs = {id(e): i for i, e in enumerate(environments) if e is not None}

    def part(p: EnvRollout) -> dict[str, Any]:
        return {**{f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.name != "env"}, "env": envs[id(p.env)]}

    return {
        "step": batch.step,
        "version": batch.version,
        "parts": {n: [part(p) for p in ps] for n, ps in batch.parts.items()},
        "rollout_seconds": dict(batch.rollout_seconds),
        "resampling": batch.resampling,
        # Episodes are plain data (messages, rewards, the environment's own state): pickled as they are.
        "conversations": [{"env": envs[id(c.env)], "row_indices": c.row_indices, "episodes": c.episodes} for c in batch.conversations],
    }


def batch_from_state(state: dict[str, Any], environments: list[Any]) -> ProducedBatch:
    parts: dict[str, list[EnvRollout]] = defaultdict(list)
    for n, ps in state["parts"].items():
        parts[n] = [EnvRollout(**{**p, "env": environments[p["env"]]}) for p in ps]
    conversations = [ConversationPart(environments[c["env"]], c["row_indices"], c["episodes"]) for c in state.get("conversations", [])]
    return ProducedBatch(state["step"], state["version"], parts, defaultdict(float, state["rollout_seconds"]), state["resampling"], conversations)


def load_in_flight(folder: Path, environments: list[Any], rank: int = 0) -> tuple[list[ProducedBatch], dict[str, Any] | None]:
    """The batches rank `rank`'s producer saved as in flight (none when the checkpoint was saved without async),
    and where a producer process stood after them (None for the thread producer, which shares the trainer's RNG
    and data position)."""
    path = folder / in_flight_file(rank)
    if not path.exists():
        if rank != 0 and (folder / IN_FLIGHT_FILE).exists():
            # Rank 0's producer had batches in flight and this rank's did not save its own: its producer would start
            # elsewhere in the schedule than rank 0's, and the ranks would train on different steps' batches.
            raise FileNotFoundError(f"{folder}: rank 0 saved batches in flight ({IN_FLIGHT_FILE}) but rank {rank} did not ({path.name}): resume with the world size that saved it")
        return [], None
    state = torch.load(path, weights_only=False)  # our own file, written by save_in_flight
    return [batch_from_state(b, environments) for b in state["batches"]], state.get("producer")
