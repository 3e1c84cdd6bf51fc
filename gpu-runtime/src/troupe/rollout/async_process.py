"""Asynchronous rollouts in a producer process (`algorithm.async.maxStaleness: K >= 1` on a CPU host).

The thread producer (async_rollout.py) overlaps little on a CPU: transformers' `generate` on a small model is
mostly per-token Python, and the producer thread holds the GIL against the trainer thread (measured: async ran
at 0.97x the synchronous step time under load, 0.71x at best). A process has its own interpreter, so sampling
and training really run side by side. It is the same schedule as the thread's: the batch of step t is sampled
with the weights after exactly max(b, t - 1 - K) updates, so a run is the same run however the two processes'
timing falls.

    trainer (this process)                       producer process (spawned)
    start: the setup (spec, the actors'          builds its own environments and rewards from the spec, and a
      modules, ...) as the first command           sampling copy of each trainable actor (the trainer's module,
    take(t): wait for batch t on `batches`         pickled once at start), with the trainer's data position and
    update with it                                 torch RNG state; for t = next, next + 1, ...: wait for weights
    publish(t): the trained parameters ->          version max(b, t - 1 - K) on `commands`, copy them out of
      shared-memory slot t % (K + 1), then         their slot into its modules, sample + score + dynamic
      ("weights", t, slot) on `commands`           sampling, put the batch on `batches`
    checkpoint: asks for the producer's
      RNG and data position once it is idle

Weights: K + 1 named POSIX shared-memory segments ("slots", `troupe-weights-<trainer pid>-<n>-<slot>` in
/dev/shm), each big enough for every trained parameter the producer samples with (a LoRA actor: its adapter),
laid out by one table fixed at start. Publishing is a memcpy per parameter and a small message (~0.3 ms a step
on the demo's 2-layer model, 553 kB), not every tensor pickled through the pipe (~2 ms alone, 6-13 ms inside a
run on a busy 2-core host, and growing with the model).
Memory: K + 1 copies of those parameters beside the trainer's and the producer's own (this producer serves CPU
hosts only). No acknowledgement is needed to reuse a slot (see `publish`). The trainer unlinks the segments
when it closes the producer, also after a failed run; if the trainer dies without closing (kill -9), the
producer unlinks them when it sees its parent gone, and failing that the multiprocessing resource tracker
unlinks them once both have exited.

Random draws: the producer draws from its own torch generator (a copy of the trainer's when it starts, or the
one a checkpoint saved for it), so the trainer's own draws (evaluation) never meet it: eval needs no quiesce.
Checkpoints save, beside the batches in flight, the producer's RNG state and data position after them
(`in_flight.pt` "producer"); a resumed run starts its producer from those.

Used when every part of the sampling side can be rebuilt from the spec in another process: K >= 1 (K = 0
cannot overlap and keeps the thread, the synchronous loop bit for bit), a CPU device, no rewards passed in as
Python objects (`library_rewards`), no LoRA actors sharing one base module. Otherwise the thread producer.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import multiprocessing as mp
import os
import pickle
import queue
import signal
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.shared_memory import SharedMemory
from pathlib import Path
from typing import Any

import torch

from ..actors import Actor
from ..envs.environment_kinds import build_run_environments
from ..rewards.binding import bind_rewards
from ..spec.runspec_types import Algorithm
from ..host.system import seed_everything
from .async_rollout import ProducedBatch, batch_from_state, batch_state, in_flight_file, max_staleness, produce_batch
from .copy_blockers import CopyRefusals, copy_blockers
from .full_weights import plain_copy, shards, trained_tensors
from ..models.loading import LoadedModel
from ..engines.rollout import HFEngine

POLL_S = 1.0  # how often a waiting side checks that the other is still alive
SEGMENT_PREFIX = "troupe-weights"  # the weight slots' names in /dev/shm: troupe-weights-<trainer pid>-<n>-<slot>
ALIGN = 64  # each parameter's byte offset in a slot: a cache line, and a multiple of every dtype's size
_producers_made = itertools.count()  # <n>: names stay unique when one process runs several producers in turn


# Why the producer stays a thread (copy_blockers.py: the same refusals as rollout workers, in our words).
REFUSALS = CopyRefusals(
    gpu="the producer process runs on CPU hosts only (on a GPU both would share the device)",
    in_process_rewards="rewards passed in as Python objects cannot be rebuilt in another process",
    shared_base="LoRA actors sharing one base module are copied as one",
    own_engine="a vLLM actor's engine lives in this process: the thread samples with it and pushes each update to it",
)
CPU = torch.device("cpu")  # the producer process and rollout workers sample on CPU hosts only (copy_blockers.py)


def _put(q: Any, message: Any) -> None:
    """By value: torch's own pickling for queues passes a tensor as a file descriptor that the receiver fetches from
    the sender's resource sharer, which fails once the sender has exited and hung here while both lived; bytes
    through the pipe cannot. What goes this way: the setup (the actors' modules, once), batches and small commands;
    the weights after each update go through shared memory (`WeightSlots`)."""
    q.put(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _get(q: Any, timeout: float) -> Any:
    return pickle.loads(q.get(timeout=timeout))


def process_producer_ok(algorithm: Algorithm, actors: dict[str, "Actor"], rewards: dict[str, Any]) -> str | None:
    """None when the producer can be a process; else why it stays a thread (logged). The device is the actors'."""
    if max_staleness(algorithm) == 0:
        return "maxStaleness 0 samples each batch after the previous update: nothing to overlap"
    return copy_blockers(actors, rewards, REFUSALS)


def _trained(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The parameters an update changes (all of a full-weight actor; a LoRA actor's adapter)."""
    return {n: p for n, p in module.named_parameters() if p.requires_grad}


Trained = dict[str, "torch.nn.Module | dict[str, torch.Tensor]"]  # actor -> its module, or its trained tensors by name


def _tensors(trained: Trained) -> dict[str, dict[str, torch.Tensor]]:
    """Each actor's trained tensors: a module's trainable parameters, or the full values a sharded actor gathered
    (full_weights.py; its own parameters are slices)."""
    return {actor: _trained(m) if isinstance(m, torch.nn.Module) else m for actor, m in trained.items()}


@dataclass(frozen=True)
class SlotEntry:
    """Where one trained parameter lies in every slot."""

    actor: str
    name: str
    dtype: torch.dtype
    shape: tuple[int, ...]
    offset: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def slot_layout(modules: Trained) -> tuple[list[SlotEntry], int]:
    """The table of the trained parameters of `modules` (actor name -> module or trained tensors) and the bytes a
    slot needs."""
    table, end = [], 0
    for actor, tensors in _tensors(modules).items():
        for name, param in tensors.items():
            if param.numel() == 0:
                continue  # nothing to hand over (and torch.frombuffer refuses a count of 0)
            offset = -(-end // ALIGN) * ALIGN
            table.append(SlotEntry(actor, name, param.dtype, tuple(param.shape), offset))
            end = offset + param.numel() * param.element_size()
    return table, end


class WeightSlots:
    """Named shared-memory segments, each holding one version of the trained parameters at the table's offsets.
    The trainer creates them (and alone unlinks them); the producer attaches by name."""

    def __init__(self, table: list[SlotEntry], segments: list[SharedMemory]):
        self.table = table
        self._segments = segments
        # Tensor views of each segment, made once. They export the segment's buffer: `close` drops them first.
        self._views = [[torch.frombuffer(s.buf, dtype=e.dtype, count=e.numel, offset=e.offset).view(e.shape) for e in table] for s in segments]

    @classmethod
    def create(cls, modules: Trained, count: int) -> "WeightSlots":
        table, size = slot_layout(modules)
        prefix = f"{SEGMENT_PREFIX}-{os.getpid()}-{next(_producers_made)}"
        segments: list[SharedMemory] = []
        try:
            for slot in range(count):
                segments.append(SharedMemory(name=f"{prefix}-{slot}", create=True, size=max(size, 1)))
            return cls(table, segments)
        except BaseException:
            _close(segments, unlink=True)
            raise

    @classmethod
    def attach(cls, table: list[SlotEntry], names: list[str]) -> "WeightSlots":
        segments: list[SharedMemory] = []
        try:
            for name in names:
                segments.append(SharedMemory(name=name))
            return cls(table, segments)
        except BaseException:
            _close(segments, unlink=False)
            raise

    @property
    def names(self) -> list[str]:
        return [s.name for s in self._segments]

    def write(self, slot: int, modules: Trained) -> None:
        params = _tensors(modules)
        for entry, view in zip(self.table, self._views[slot]):
            view.copy_(params[entry.actor][entry.name].detach())

    def read(self, slot: int, modules: dict[str, torch.nn.Module]) -> None:
        params = {actor: dict(module.named_parameters()) for actor, module in modules.items()}
        with torch.no_grad():  # a parameter that requires grad refuses an in-place copy under autograd
            for entry, view in zip(self.table, self._views[slot]):
                params[entry.actor][entry.name].copy_(view)

    def close(self, unlink: bool) -> None:
        """Detaches (idempotent); `unlink` also removes the names, which exactly one process may do."""
        self._views = []
        segments, self._segments = self._segments, []
        _close(segments, unlink)


def _close(segments: list[SharedMemory], unlink: bool) -> None:
    for segment in segments:
        if unlink:
            segment.unlink()  # also unregisters it from the resource tracker
        segment.close()


class ProcessRolloutProducer:
    """The trainer's side of the producer process; the same interface as `RolloutProducer`."""

    lent: frozenset[str] = frozenset()  # no engine is lent to it: actors with their own engine keep the thread (REFUSALS)

    def __init__(
        self,
        document: Mapping[str, Any],
        algorithm: Algorithm,
        seed: int,
        total_steps: int,
        environments: list[Any],
        prompts_per_env: list[int],
        actors: dict[str, "Actor"],
        first_step: int,
        work_dir: Path,
        log: Any,
        queued: list[ProducedBatch] | None = None,
        state: dict[str, Any] | None = None,
        rank: int = 0,
    ):
        """`document`: the run's JSON document, which the producer process rebuilds its environments and rewards
        from (their builders read it); what the producer itself reads comes typed: the algorithm section (its
        `async_` set), the run's seed and `trainer.steps`. With several ranks each rank runs one (`rank`: whose
        in-flight file its checkpoints write); a sharded actor's copy and every publish gather its full
        parameters, a collective each rank's producer joins at the same point (full_weights.py)."""
        self.environments, self.log, self.rank = environments, log, rank
        self.max_staleness = max_staleness(algorithm)
        self.total_steps = total_steps
        self.actors = actors
        queued = sorted(queued or [], key=lambda b: b.step)
        if [b.step for b in queued] != list(range(first_step, first_step + len(queued))):
            raise ValueError(f"in-flight batches {[b.step for b in queued]} do not continue from step {first_step}")
        self._ready: dict[int, ProducedBatch] = {b.step: b for b in queued}
        # Where the producer starts: a checkpoint's saved producer state, else this process's (fresh run).
        state = state or {"torch_rng": torch.get_rng_state(), "samplers": [e.sampler.state() for e in environments]}
        sampled = {a for e, n in zip(environments, prompts_per_env) if n > 0 for a in e.actors}
        models = {
            name: (a.index, a.spec, a.section, plain_copy(a, work_dir) if shards(a) else a.loaded.model, a.loaded.tokenizer, a.loaded.description)
            for name, a in actors.items()
            if name in sampled
        }
        # The actors whose updates the producer samples with (a trainable actor it never samples needs no copy).
        self._published = [name for name in models if actors[name].trainable]
        # Versions up to the base (updates done at start) are in the modules sent with the setup, never published.
        self._base = first_step - 1
        self._copied = self._base  # the newest version the producer has copied out of its slot (a batch says so)
        setup = {
            "document": dict(document),
            "algorithm": algorithm,
            "seed": seed,
            "total_steps": total_steps,
            "work_dir": str(work_dir),
            "prompts_per_env": prompts_per_env,
            "models": models,
            "threads": torch.get_num_threads(),
            "first_step": first_step + len(queued),
            "base": self._base,
            "state": state,
        }
        self._slots = WeightSlots.create(self._modules(), self.max_staleness + 1)
        try:
            setup["slots"] = {"table": self._slots.table, "names": self._slots.names}
            payload = pickle.dumps(("setup", setup), protocol=pickle.HIGHEST_PROTOCOL)  # before the start: a failure leaves no process
            context = mp.get_context("spawn")  # fork would copy the trainer's threads' locks mid-use
            self._commands: Any = context.Queue()
            self._batches: Any = context.Queue()
            # Only the two queues as arguments: `start()` writes the arguments into a pipe and returns once the child
            # has read them, which it does after importing torch (seconds), and never if it dies first (the parent keeps
            # the pipe's read end open until the write is done: it hung for good under a script without a main guard).
            self._process = context.Process(target=_producer_main, args=(self._commands, self._batches), name="troupe-rollout-producer", daemon=True)
            self._process.start()
        except BaseException:  # no close() will come: the caller gets no producer
            self._slots.close(unlink=True)
            raise
        # The setup (the actors' modules) is the first command; the queue's feeder thread writes it while the trainer
        # goes on, and `_receive`'s liveness check reports a child that died before reading it.
        self._commands.put(payload)
        self._started = False  # the child's own code ran (it said so): a death before that was in spawn's bootstrap
        self._closed = False

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def _modules(self) -> Trained:
        """What a slot is filled from: the trained module itself, or a sharded actor's gathered full tensors."""
        return {name: trained_tensors(self.actors[name]) if shards(self.actors[name]) else self.actors[name].loaded.model for name in self._published}

    # ------------------------------------------------------------------ trainer side
    def _receive(self) -> tuple[Any, ...] | None:
        """Handles the producer's next message: logs and batches here (None), anything else is returned."""
        while True:
            try:
                message = _get(self._batches, POLL_S)
            except queue.Empty:
                if not self._process.is_alive():
                    raise RuntimeError(self._exit_message()) from None
                continue
            kind = message[0]
            if kind == "started":
                self._started = True
            elif kind == "log":
                self.log(message[1], message[2])
            elif kind == "error":
                where = f"while sampling step {message[1]}" if message[1] is not None else "while starting"
                raise RuntimeError(f"the rollout producer failed {where}:\n{message[2]}")
            elif kind == "batch":
                batch = batch_from_state(message[1], self.environments)
                self._ready[batch.step] = batch
                self._copied = max(self._copied, batch.version)  # it sampled with that version: copied out, and all before it
                return None
            else:
                return message

    def _exit_message(self) -> str:
        code = self._process.exitcode
        if self._started:
            return f"the rollout producer process exited (code {code}) without a word"
        message = f"the rollout producer process exited (code {code}) while starting, before its own code ran (its error, if any, is on stderr)"
        script = _reimported_main()
        if script is not None:
            # The usual cause: the producer is started with spawn, which first re-runs the main script; one that calls
            # run_spec at module level runs a second trainer there, whose own producer start fails, and exits.
            message += (
                f". A spawned process first re-runs the main script ({script}): a script that calls run_spec with asynchronous "
                'rollouts must make that call under `if __name__ == "__main__":`'
            )
        return message

    def take(self, step: int) -> ProducedBatch:
        while step not in self._ready:
            unexpected = self._receive()
            if unexpected is not None:
                raise RuntimeError(f"the rollout producer answered {unexpected[0]!r} while step {step} was awaited")
        batch = self._ready.pop(step)
        assert 0 <= step - 1 - batch.version <= self.max_staleness, (step, batch.version)
        return batch

    def publish(self, version: int) -> None:
        """After update `version`: the trained parameters into slot `version % (K + 1)`, and word of it to the producer,
        for the batch that will be sampled with them."""
        k = self.max_staleness
        if version + 1 + k > self.total_steps:
            return  # no batch will be sampled with it
        # Why K + 1 slots need no acknowledgement: this slot last held version v = version - K - 1 (if v > b, the
        # base: versions up to b are never published). We are after update `version`, which trained on the batch of
        # step `version`, sampled with version max(b, version - 1 - K) = v: before sampling it the producer had copied
        # v out of this slot, and we have that batch. So v is no longer needed here.
        if version - (k + 1) > self._copied:
            raise RuntimeError(f"weights slot {version % (k + 1)} still holds update {version - k - 1}, which the producer has not loaded (newest loaded: {self._copied})")
        slot = version % (k + 1)
        self._slots.write(slot, self._modules())
        _put(self._commands, ("weights", version, slot))

    def quiesce(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to wait for: the producer draws from its own RNG and data position, not this process's."""
        return contextlib.nullcontext()

    def _producer_state(self) -> dict[str, Any]:
        """Once the producer has made every batch it may make: its RNG state and data position (for a checkpoint).
        The batches it made arrive before its answer (one queue, in order)."""
        _put(self._commands, ("state",))
        answer = None
        while answer is None:  # the batches it made come first
            answer = self._receive()
        if answer[0] != "state":
            raise RuntimeError(f"the rollout producer answered {answer[0]!r} to a state request")
        return answer[1]

    def save_in_flight(self, folder: Path) -> int:
        """The batches made but not yet trained on, and where the producer stands after them. Returns how many."""
        state = self._producer_state()
        saved = [batch_state(self._ready[s], self.environments) for s in sorted(self._ready)]
        name = in_flight_file(self.rank)
        partial = folder / f".{name}.partial"
        torch.save({"batches": saved, "producer": state}, partial)
        partial.rename(folder / name)
        return len(saved)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._process.is_alive():
                _put(self._commands, ("close",))
                self._process.join(timeout=10)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
        finally:
            # Only once the producer has exited: attaching registered the names with the resource tracker (which it
            # shares with us) too, and a registration arriving after our unlink's unregistration would be reported
            # as a leak at exit.
            self._slots.close(unlink=True)
        for q in (self._commands, self._batches):
            q.close()
            q.cancel_join_thread()  # what is still queued is not waited for


# ---------------------------------------------------------------------- producer process


class _Log:
    def __init__(self, out: Any):
        self.out = out

    def log(self, level: str, message: str) -> None:
        _put(self.out, ("log", level, message))


def _sampling_actors(models: dict[str, tuple[Any, ...]]) -> dict[str, "Actor"]:
    """The trainer's sampled actors rebuilt in a CPU process (see CPU) from their modules and typed sections."""
    actors = {}
    for name, (index, document, section, module, tokenizer, description) in models.items():
        module.eval()
        loaded = LoadedModel(module, tokenizer, description)
        actors[name] = Actor(index, document, loaded, None, None, "", CPU, engine=HFEngine(module, tokenizer, CPU), section=section)
    return actors


def _reimported_main() -> str | None:
    """The script or module of this process's `__main__` that a spawned child runs again before its own code, if any
    (multiprocessing.spawn's rule: a package's `__main__`, as `python -m troupe`, is not re-run)."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None:
        return None if name == "__main__" or name.endswith(".__main__") else name
    return getattr(main, "__file__", None)


def _receive_setup(commands: Any, parent: Any) -> dict[str, Any] | None:
    """The trainer's first command; None if the trainer died before sending it."""
    while True:
        try:
            kind, setup = _get(commands, POLL_S)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                return None
            continue
        if kind != "setup":
            raise RuntimeError(f"the trainer's first command was {kind!r}, not its setup")
        return setup


def _producer_main(commands: Any, out: Any) -> None:
    # The trainer decides when the run stops (at its step boundary) and closes us; a Ctrl-C or SIGTERM sent to the
    # whole process group must not kill the producer under a trainer that is about to stop cleanly.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _put(out, ("started",))  # past spawn's bootstrap (re-running the main script), which a bad script dies in
    parent = mp.parent_process()
    step: int | None = None  # reported with an error: None while starting
    closing: list[Any] = []
    attached: list[WeightSlots] = []
    try:
        received = _receive_setup(commands, parent)
        if received is None:
            return
        setup: dict[str, Any] = received
        step = setup["first_step"]
        document, work_dir = setup["document"], Path(setup["work_dir"])
        algorithm, seed = setup["algorithm"], setup["seed"]
        torch.set_num_threads(setup["threads"])
        seed_everything(seed)
        rewards = bind_rewards(document, work_dir, {}, _Log(out))
        sampled = [n > 0 for n in setup["prompts_per_env"]]
        environments = build_run_environments(document, work_dir, rewards, only=sampled)
        for env, position in zip(environments, setup["state"]["samplers"]):
            if env is not None:
                env.sampler.load_state(position)
        torch.set_rng_state(setup["state"]["torch_rng"])
        samplers = _sampling_actors(setup["models"])
        slots = WeightSlots.attach(setup["slots"]["table"], setup["slots"]["names"])
        attached.append(slots)
        modules = {e.actor: samplers[e.actor].loaded.model for e in slots.table}
        live = [e for e in environments if e is not None]
        prompts = [n for e, n in zip(environments, setup["prompts_per_env"]) if e is not None]
        base, loaded, total, k = setup["base"], setup["base"], setup["total_steps"], max_staleness(algorithm)
        closing.extend(rewards.values())
        with torch.inference_mode():
            while True:
                needed = max(base, step - 1 - k)
                if step <= total and needed == loaded:
                    batch = produce_batch(step, loaded, algorithm, seed, live, prompts, samplers)
                    _put(out, ("batch", batch_state(batch, environments)))
                    step += 1
                    continue
                try:
                    command = _get(commands, POLL_S)
                except queue.Empty:
                    if parent is not None and not parent.is_alive():
                        return  # the trainer died without closing us (see `finally`)
                    continue
                if command[0] == "close":
                    out.cancel_join_thread()  # the trainer reads nothing more
                    return
                if command[0] == "state":  # idle: every batch it may make is made
                    _put(out, ("state", {"torch_rng": torch.get_rng_state(), "samplers": [_position(e, setup, i) for i, e in enumerate(environments)]}))
                elif command[0] == "weights":
                    version, slot = command[1], command[2]
                    if version > needed or slot != version % (k + 1):
                        raise RuntimeError(f"weights of update {version} arrived (slot {slot}) while update {needed} was awaited")
                    slots.read(slot, modules)
                    loaded = version
    except BaseException:  # handed to the trainer by its next take()
        _put(out, ("error", step, traceback.format_exc()))
    finally:
        trainer_gone = parent is not None and not parent.is_alive()
        if trainer_gone:
            # Batches nobody will read may fill the pipe: exiting must not wait for the queue's feeder thread to write
            # them (a producer outlived a kill -9 of its trainer that way).
            out.cancel_join_thread()
        for slots in attached:
            # The trainer unlinks the slots when it closes us. Gone without closing (kill -9), it never will: we do, so
            # none stays in /dev/shm (the resource tracker would too, but only once we exit, and with a leak warning).
            slots.close(unlink=trainer_gone)
        for reward in closing:  # sandboxed reward workers
            getattr(reward, "close", lambda: None)()
        exit_without_teardown(out)  # also after the early returns above


def exit_without_teardown(out: Any) -> None:
    """Ends a spawned child once it has cleaned up after itself: what it queued is written first (an error's
    traceback; nothing once the queue's join was cancelled), then os._exit. spawn's own exit is sys.exit, whose
    interpreter teardown (collecting every torch and transformers object) took 3 to 8 s on a 2-core host while the
    trainer waited in close() before it could unlink the weight slots, at the end of every run."""
    out.close()
    out.join_thread()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _position(env: Any, setup: dict[str, Any], index: int) -> dict[str, Any]:
    """A sampled environment's data position; an unsampled one keeps the position it came with."""
    return env.sampler.state() if env is not None else setup["state"]["samplers"][index]

