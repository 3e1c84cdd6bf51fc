"""Rollout workers (`rollout.workers: {count, processes: true | gpus: [ids]}`): a pool of processes that sample, the
trainer trains. Where each worker samples and the weight group's backend come from placement.py: CPU workers and a
gloo group, or worker i on GPU ids[i] (its sampling copy moved there) and an NCCL group, the same code otherwise.

    trainer (this process, rank 0 of a gloo group)        worker i (spawned, rank i + 1)
    start: spawn N workers, wait until each has            connects to the group; builds its environments and
      started, connect the group, send each the setup        rewards from the spec and a sampling copy of every
      (the spec, the actors' modules, the broadcast          sampled actor (the trainer's module, pickled once)
      table)
    take(t): draw the step's rows from the run's           ("step", t, rows): loads its rows as its environments'
      samplers (the synchronous loop's draws), hand          data, seeds its RNGs from (seed, t, i), samples and
      worker i its slice of every environment's rows,        scores its share (collect.py), sends the batch back
      merge the N batches
    learn with it
    publish(t): ("weights", t) to every worker, then       ("weights", t): receives every trained parameter, one
      every trained parameter broadcast over gloo, one       chunk at a time, straight into its module
      chunk (<= CHUNK_BYTES) at a time, never a file

On policy (no `algorithm.async`): every batch is sampled with the weights after the previous update, as the
synchronous loop does; the workers only spread the sampling over processes.

Asynchronous (`algorithm.async.maxStaleness: K`): the workers sample ahead, on the async producers' schedule
(async_rollout.py): the batch of step t is sampled with the weights after exactly max(b, t - 1 - K) updates, so
the sampling of step t + 1 overlaps the update of step t. The trainer hands out step t's rows as soon as that
version is published (at start: the first K + 1 steps' rows at once; after update v: the rows of step v + 1 + K).
The weights go through the producer process's K + 1 shared-memory slots (async_process.WeightSlots), not the gloo
broadcast: a broadcast is a collective, so the trainer would wait in it for every worker to finish the batch it is
sampling, which is the overlap we want; writing a slot waits for nobody (a memcpy per parameter), and each worker
copies the version out when its queue reaches the word of it, which is before the rows that need it. GPU workers
(`gpus`) feeding async take the same path: the trainer copies its device's parameters into the host slot, each
worker copies the slot onto its own GPU (`Tensor.copy_` across devices; two PCIe/NVLink copies of the weights per
update instead of one NCCL broadcast, and no collective for the trainer to wait in). K + 1 slots
need no acknowledgement, for the producer's reason (`publish`). The rows still come from the run's samplers, in
step order, so a checkpoint (taken once every batch handed out has come back) saves the data position after the
batches in flight, and the batches themselves (`in_flight.pt`).

Either way the rows are the synchronous loop's own (the trainer draws them from its samplers, so checkpoints keep
the data position); the sampling RNG is each worker's, seeded per step from (seed, step, worker), so a run is the
same run however the workers' timing falls, and resume is exact.

Failure: a worker that raises sends its traceback and the run fails with it; a worker that dies without a word
(killed) fails the run with its exit code or signal. A failed worker is not replaced: the run stops, honestly, at
the step it could not finish. The trainer closes the pool on every way out (end, failure, cancel: `close` is
registered with the loop's exit stack); a worker whose trainer died without closing it (kill -9) sees its parent
gone and exits.

Per step (publish) each trained actor's metric event gets `time/rollout_busy_s` (the workers' sampling seconds,
summed), `time/rollout_idle_s` (the pool's worker-seconds not sampling), `time/trainer_busy_s`,
`time/trainer_idle_s` (waiting for the workers' batches) and `time/weight_sync_s` (the broadcast).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import datetime
import multiprocessing as mp
import pickle
import queue
import signal
import time
import traceback
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager

import torch
import torch.distributed as dist

from ..algorithms.training_shares import ConversationPart
from ..engines.rollout.sampling import concat_rollouts
from ..envs.single_turn import EnvRollout
from ..envs.environment_kinds import build_run_environments
from ..engines.rollout import HFEngine
from ..rewards.binding import bind_rewards
from ..spec.runspec_types import Algorithm, RolloutWorkers
from ..host.system import seed_everything
from .async_process import WeightSlots, _get, _put, _reimported_main, _sampling_actors, _trained, exit_without_teardown
from .copy_blockers import CopyRefusals, copy_blockers
from .async_rollout import IN_FLIGHT_FILE, ProducedBatch, batch_from_state, batch_state, produce_batch
from .placement import HOST, WorkerPlacement, placement_of, take_device, weight_group
from .source import SamplingPlaces, StepBatch

if TYPE_CHECKING:
    from ..actors import Actor

POLL_S = 1.0  # how often a waiting side checks that the others are still alive
CHUNK_BYTES = 16 * 2**20  # one broadcast's most bytes: a parameter larger than this goes in several chunks
CONNECT_S = 120  # the weight group's connect and collective timeout


# What a worker process cannot carry (copy_blockers.py: the process producer's refusals, in our words).
REFUSALS = CopyRefusals(
    gpu="rollout.workers.processes: CPU rollout workers need a CPU trainer (for a CUDA trainer: GPU workers, rollout.workers.gpus)",
    in_process_rewards="rollout.workers: rewards passed in as Python objects cannot be rebuilt in a worker process",
    shared_base="rollout.workers: LoRA actors sharing one base module cannot be copied to a worker",
    own_engine="rollout.workers: an actor sampling with its own vLLM engine cannot be copied to a worker",
)


def workers_ok(actors: dict[str, "Actor"], rewards: dict[str, Any], placement: WorkerPlacement | None = None) -> str | None:
    """None when the pool can run these actors and rewards; else why not (what spec/ cannot see: the actors'
    devices, rewards passed in as Python objects). The spec rules (spec/rollout_rules.py) refuse the rest by field."""
    if placement is None or not placement.on_gpus:
        return copy_blockers(actors, rewards, REFUSALS)
    # GPU workers: the trainer's actors on CUDA (the NCCL broadcast sends from its device; a stand-in keeps the CPU),
    # and what copy_blockers refuses besides the device.
    if placement.stand_in is None and any(a.device.type != "cuda" for a in actors.values()):
        return "rollout.workers.gpus: GPU rollout workers take their weights from a CUDA trainer: the actors are not on CUDA (trainer.device)"
    trainer_gpus = {f"cuda:{torch.cuda.current_device() if a.device.index is None else a.device.index}" for a in actors.values() if a.device.type == "cuda"}
    if placement.stand_in is None and trainer_gpus & set(placement.devices):
        return f"rollout.workers.gpus: a worker's GPU is the trainer's ({', '.join(sorted(trainer_gpus & set(placement.devices)))}): NCCL needs one GPU per rank"
    return copy_blockers(actors, rewards, REFUSALS, on_cpu=False)


def split(n: int, count: int) -> list[int]:
    """`n` prompts over `count` workers, as even as can be, the first ones taking the remainder."""
    return [n // count + (1 if i < n % count else 0) for i in range(count)]


def step_seed(seed: int, step: int, worker: int) -> int:
    """Worker `worker`'s RNG seed at `step`: fixed by the run, not by timing (resume is exact)."""
    return (seed * 1_000_003 + step * 10_007 + worker) % 2**31


def chunks(tensor: torch.Tensor) -> list[torch.Tensor]:
    """Contiguous views of `tensor`'s elements, each at most CHUNK_BYTES: what one broadcast carries."""
    return chunked(tensor, CHUNK_BYTES)


def chunked(tensor: torch.Tensor, chunk_bytes: int) -> list[torch.Tensor]:
    flat = tensor.view(-1)
    per = max(1, chunk_bytes // max(tensor.element_size(), 1))
    return [flat[start : start + per] for start in range(0, flat.numel(), per)]


def _portable(module: torch.nn.Module) -> torch.nn.Module:
    """The module as the setup pickles it: on the CPU (a CUDA tensor unpickles onto the trainer's device index;
    each worker moves its copy to its own device). A CPU module goes as it is."""
    if all(p.device.type == "cpu" for p in module.parameters()):
        return module
    return copy.deepcopy(module).to("cpu")


class WorkerPoolSource:
    """The trainer's side of the pool, as a `RolloutSource`."""

    def __init__(
        self,
        document: Mapping[str, Any],
        workers: RolloutWorkers,
        algorithm: Algorithm,
        seed: int,
        environments: list[Any],
        prompts_per_env: list[int],
        actors: dict[str, "Actor"],
        places: SamplingPlaces,
        work_dir: Path,
        log: Callable[[str, str], Any],
        metric: Callable[..., Any],
        report_memory: Callable[[int, str], None] = lambda step, phase: None,
        placement: WorkerPlacement | None = None,
        total_steps: int = 0,
        first_step: int = 1,
        queued: list[ProducedBatch] | None = None,
    ) -> None:
        """`document`: the run's JSON document, which each worker rebuilds its environments and rewards from (their
        builders read it); what the pool itself reads comes typed: `rollout.workers`, the algorithm section and the
        run's seed. With `algorithm.async`: `total_steps` (trainer.steps), `first_step` and the batches a
        checkpoint saved in flight (`queued`, from step `first_step` on). `placement`: each worker's device and the
        weight group's backend (placement.py; default: `rollout.workers`' own)."""
        self.placement = placement or placement_of(workers)
        self.told: dict[int, str] = {}  # worker -> the device it was told to use (it says so when it starts)
        self.environments, self.prompts_per_env, self.actors = environments, prompts_per_env, actors
        self.places, self.log, self.metric, self.report_memory = places, log, metric, report_memory
        self.count = workers.count
        sampled = {a for e, n in zip(environments, prompts_per_env) if n > 0 for a in e.actors}
        models = {name: (a.index, a.spec, a.section, _portable(a.loaded.model), a.loaded.tokenizer, a.loaded.description) for name, a in actors.items() if name in sampled}
        # What a worker samples with and an update changes: broadcast after every update, in this order.
        self.table = [(name, param) for name in models if actors[name].trainable for param, p in _trained(actors[name].loaded.model).items() if p.numel() > 0]
        self.k = algorithm.async_.max_staleness if algorithm.async_ is not None else None
        self.total_steps = total_steps
        queued = sorted(queued or [], key=lambda b: b.step)
        if [b.step for b in queued] != list(range(first_step, first_step + len(queued))):
            raise ValueError(f"in-flight batches {[b.step for b in queued]} do not continue from step {first_step}")
        self._ready: dict[int, ProducedBatch] = {b.step: b for b in queued}  # async: whole batches, not yet taken
        self._shares: dict[int, dict[int, tuple[ProducedBatch, float]]] = defaultdict(dict)  # async: batches partly back
        self._base = first_step - 1  # updates done at (re)start: what the modules sent with the setup hold
        self._published = self._base  # async: the newest version handed to the workers
        self._copied = self._base  # async: the newest version every worker has sampled with (copied out of its slot)
        self._next = first_step + len(queued)  # async: the next step whose rows go out
        self._versions: dict[int, int] = {}  # async: step -> the version its rows went out with
        self._last_taken = first_step - 1  # async: the newest step the trainer has taken
        self._busy_by_step: dict[int, list[float]] = {}  # async: each worker's sampling seconds for the step
        self._slots: WeightSlots | None = None
        if self.k is not None:
            self._slots = WeightSlots.create({name: actors[name].loaded.model for name in dict.fromkeys(n for n, _ in self.table)}, self.k + 1)
        setup = {
            "document": dict(document),
            "algorithm": algorithm,
            "seed": seed,
            "work_dir": str(work_dir),
            "sampled": [n > 0 for n in prompts_per_env],
            "models": models,
            "threads": max(1, torch.get_num_threads() // self.count),
            "table": self.table,
            "slots": {"table": self._slots.table, "names": self._slots.names} if self._slots is not None else None,
            "placement": self.placement,
            "chunk_bytes": CHUNK_BYTES,  # read now: a spawned worker imports this module afresh
        }
        try:
            payload = pickle.dumps(("setup", setup), protocol=pickle.HIGHEST_PROTOCOL)  # before any start: a failure leaves no process
        except BaseException:
            if self._slots is not None:
                self._slots.close(unlink=True)
            raise
        self._closed = False
        self._chunk_bytes = CHUNK_BYTES
        self._processes: list[Any] = []
        self._commands: list[Any] = []
        self._group: Any = None
        context = mp.get_context("spawn")  # fork would copy the trainer's threads' locks mid-use
        self._results: Any = context.Queue()
        self._store = dist.TCPStore(HOST, 0, self.count + 1, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=CONNECT_S))
        try:
            for i in range(self.count):
                commands = context.Queue()
                process = context.Process(target=_worker_main, args=(i, self._store.port, self.count + 1, self.placement, commands, self._results), name=f"troupe-rollout-worker-{i}", daemon=True)
                process.start()
                self._commands.append(commands)
                self._processes.append(process)
            started: set[int] = set()
            while len(started) < self.count:
                message = self._receive()
                if message[0] == "started":
                    started.add(message[1])
            self._group = weight_group(self.placement.backend, self._store, 0, self.count + 1, CONNECT_S)
            for commands in self._commands:
                commands.put(payload)
            self._dispatch()  # async: the steps the base version samples
        except BaseException:
            self.close()
            raise
        # Seconds of the step being made, for its metrics (publish).
        self._taken_at = 0.0
        self._waited = 0.0
        self._busy: list[float] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._processes]

    @property
    def sync_words(self) -> str:
        """How the weights reach the workers, for the run's log."""
        where = f"on {', '.join(self.placement.devices)}; " if self.placement.on_gpus else ""
        if self.k is None:
            return f"{where}weights broadcast over {self.placement.backend} after every update, one parameter at a time in chunks"
        return f"{where}asynchronous, up to {self.k} updates behind; weights through {self.k + 1} shared-memory slots"

    # ------------------------------------------------------------------ messages
    def _receive(self) -> tuple[Any, ...]:
        """The pool's next message (logs are logged here); a worker's error or death fails the run."""
        while True:
            try:
                message = _get(self._results, POLL_S)
            except queue.Empty:
                for i, process in enumerate(self._processes):
                    if not process.is_alive():
                        raise RuntimeError(self._death(i)) from None
                continue
            if message[0] == "log":
                self.log(message[1], message[2])
            elif message[0] == "placed":
                self.told[message[1]] = message[2]
            elif message[0] == "error":
                where = f"while sampling step {message[2]}" if message[2] is not None else "while starting"
                raise RuntimeError(f"rollout worker {message[1]} failed {where}:\n{message[3]}")
            else:
                return message

    def _death(self, i: int) -> str:
        code = self._processes[i].exitcode
        how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"code {code}"
        message = f"rollout worker {i} (pid {self._processes[i].pid}) exited ({how}) without a word; the run stops (a failed worker is not replaced)"
        script = _reimported_main()
        if script is not None:
            message += f". A spawned worker first re-runs the main script ({script}): call run_spec under `if __name__ == \"__main__\":`"
        return message

    # ------------------------------------------------------------------ RolloutSource
    def _send_rows(self, step: int, version: int) -> None:
        """The synchronous loop's rows of `step`, from the run's samplers (in spec order: one shared row RNG), split
        by worker; each samples its share with the weights it holds (`version` updates)."""
        rows = [env.sampler.take(n) if env is not None and n > 0 else [] for env, n in zip(self.environments, self.prompts_per_env)]
        shares = [split(n, self.count) for n in self.prompts_per_env]
        for i, commands in enumerate(self._commands):
            given = []
            for env_rows, env_shares in zip(rows, shares):
                begin = sum(env_shares[:i])
                given.append(env_rows[begin : begin + env_shares[i]])
            _put(commands, ("step", step, given, version))

    def _dispatch(self) -> None:
        """Async: the rows of every step whose weights version is now published. A worker's queue is in order, so
        it samples them after loading that version and before the next (the schedule's exact version)."""
        if self.k is None:
            return
        while self._next <= self.total_steps and max(self._base, self._next - 1 - self.k) <= self._published:
            self._versions[self._next] = self._published
            self._send_rows(self._next, self._published)
            self._next += 1

    def _collect(self) -> None:
        """Async: one batch share from a worker; a step whose every share is back becomes a whole batch."""
        message = self._receive()
        if message[0] != "batch":
            raise RuntimeError(f"rollout worker answered {message[0]!r} while batches were awaited")
        self._file(message)

    def _file(self, message: tuple[Any, ...]) -> None:
        share = batch_from_state(message[2], self.environments)
        self._shares[share.step][message[1]] = (share, message[3])
        if len(self._shares[share.step]) == self.count:
            parts = self._shares.pop(share.step)
            merged = merge([parts[i][0] for i in range(self.count)], self._pad_ids())
            self._ready[share.step] = ProducedBatch(share.step, share.version, merged.parts, merged.rollout_seconds, {}, merged.conversations)
            self._busy_by_step[share.step] = [parts[i][1] for i in range(self.count)]
            self._copied = max(self._copied, share.version)

    def _pad_ids(self) -> dict[str, int]:
        return {name: a.loaded.tokenizer.pad_token_id for name, a in self.actors.items()}

    def take(self, step: int) -> StepBatch:
        if self.k is not None:
            return self._take_ahead(step)
        started = time.monotonic()
        with self.places.sampling(step):
            self._send_rows(step, step - 1)
            batches: dict[int, ProducedBatch] = {}
            busy: dict[int, float] = {}
            while len(batches) < self.count:
                message = self._receive()
                if message[0] != "batch" or message[2]["step"] != step:
                    raise RuntimeError(f"rollout worker answered {message[0]!r} while step {step} was awaited")
                batches[message[1]] = batch_from_state(message[2], self.environments)
                busy[message[1]] = message[3]
        self.places.handed_over(step, self.report_memory)
        self._taken_at, self._waited, self._busy = started, time.monotonic() - started, [busy[i] for i in range(self.count)]
        return merge([batches[i] for i in range(self.count)], self._pad_ids())

    def _take_ahead(self, step: int) -> StepBatch:
        """Async: batch `step`, sampled ahead (it may be back already); a resumed run's first come from its checkpoint."""
        started = time.monotonic()
        with self.places.sampling(step):
            while step not in self._ready:
                self._collect()
        batch = self._ready.pop(step)
        self._last_taken = step
        assert 0 <= step - 1 - batch.version <= (self.k or 0), (step, batch.version)
        self.places.handed_over(step, self.report_memory)
        self._taken_at, self._waited = started, time.monotonic() - started
        self._busy = self._busy_by_step.pop(step, [0.0] * self.count)  # a batch from a checkpoint was sampled before
        return StepBatch(batch.parts, batch.conversations, batch.rollout_seconds, batch.resampling, batch.staleness)

    def publish(self, step: int) -> None:
        """The weights after update `step` to every worker: each trained parameter broadcast, chunk by chunk."""
        synced = time.monotonic()
        for i, process in enumerate(self._processes):
            if not process.is_alive():
                raise RuntimeError(self._death(i))
        if self.k is not None:
            self._write_slot(step)
        else:
            self._broadcast(step)
        now = time.monotonic()
        sync = now - synced
        wall = now - self._taken_at
        values = {
            "time/rollout_busy_s": sum(self._busy),
            "time/rollout_idle_s": max(0.0, self.count * wall - sum(self._busy)),
            "time/trainer_busy_s": max(0.0, wall - self._waited - sync),
            "time/trainer_idle_s": self._waited,
            "time/weight_sync_s": sync,
        }
        for name in dict.fromkeys(name for name, _ in self.table):
            self.metric(step, values, actor=name)

    def _write_slot(self, version: int) -> None:
        """Async: the weights after update `version` into slot `version % (K + 1)`, word of it to every worker, then
        the rows of the step that samples with them."""
        assert self.k is not None and self._slots is not None
        if version + 1 + self.k > self.total_steps:
            return  # no batch will be sampled with it
        # The slot last held version - K - 1, which step version (trained just now) was sampled with: every worker
        # had copied it out before sampling its share (async_process.ProcessRolloutProducer.publish says it in full).
        if version - (self.k + 1) > self._copied:
            raise RuntimeError(f"weights slot {version % (self.k + 1)} still holds update {version - self.k - 1}, which the workers have not all loaded (newest: {self._copied})")
        slot = version % (self.k + 1)
        self._slots.write(slot, {name: self.actors[name].loaded.model for name in dict.fromkeys(n for n, _ in self.table)})
        for commands in self._commands:
            _put(commands, ("weights", version, slot))
        self._published = version
        self._dispatch()

    def _broadcast(self, step: int) -> None:
        """On policy: every trained parameter broadcast over gloo, chunk by chunk (the workers are idle, waiting)."""
        for commands in self._commands:
            _put(commands, ("weights", step))
        try:
            with torch.no_grad():
                for name, param in self.table:
                    tensor = dict(self.actors[name].loaded.model.named_parameters())[param].detach()
                    if not tensor.is_contiguous():
                        tensor = tensor.contiguous()
                    for chunk in chunked(tensor, self._chunk_bytes):
                        self._group.broadcast(chunk, 0).wait()
        except RuntimeError as e:  # gloo's word for a peer gone mid-broadcast: say which worker, if one died
            for i, process in enumerate(self._processes):
                process.join(timeout=POLL_S)
                if not process.is_alive():
                    raise RuntimeError(self._death(i) + f" (during the weight broadcast after update {step})") from e
            raise

    def worker_weights(self) -> list[dict[tuple[str, str], torch.Tensor]]:
        """Every worker's copy of the broadcast parameters once it has read every command before this request (for
        tests: they must equal the trainer's at the version last handed out)."""
        for commands in self._commands:
            _put(commands, ("weights?",))
        answers: dict[int, dict[tuple[str, str], torch.Tensor]] = {}
        while len(answers) < self.count:
            message = self._receive()
            if message[0] == "batch" and self.k is not None:  # sampled ahead before the request was read
                self._file(message)
                continue
            if message[0] != "weights":
                raise RuntimeError(f"rollout worker answered {message[0]!r} to a weights request")
            answers[message[1]] = message[2]
        return [answers[i] for i in range(self.count)]

    def quiesce(self) -> ContextManager[None]:
        """The workers draw from their own RNGs, never this process's: nothing to wait for (`save_in_flight` waits
        for the batches handed out)."""
        return contextlib.nullcontext()

    def save_in_flight(self, folder: Path) -> int:
        """On policy nothing is in flight between steps. Async: once every step handed out has come back, those
        batches (the checkpoint saved the samplers' position after their rows). Returns how many."""
        if self.k is None:
            return 0
        while any(s not in self._ready for s in range(self._last_taken + 1, self._next)):
            self._collect()
        saved = [batch_state(self._ready[s], self.environments) for s in sorted(self._ready)]
        partial = folder / f".{IN_FLIGHT_FILE}.partial"
        torch.save({"batches": saved}, partial)
        partial.rename(folder / IN_FLIGHT_FILE)
        return len(saved)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for process, commands in zip(self._processes, self._commands):
            if process.is_alive():
                with contextlib.suppress(Exception):
                    _put(commands, ("close",))
        deadline = time.monotonic() + 10
        for process in self._processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        for q in [*self._commands, self._results]:
            q.close()
            q.cancel_join_thread()  # what is still queued is not waited for
        if self._slots is not None:  # only once the workers have exited (async_process.ProcessRolloutProducer.close says why)
            self._slots.close(unlink=True)
        self._group = None
        self._store = None  # the rendezvous closes with it


def merge(batches: list[ProducedBatch], pad_ids: dict[str, int]) -> StepBatch:
    """The workers' batches as one step's, as the synchronous loop would have made it: one part per environment
    (the workers' shares concatenated in worker order, which is the order of the rows: groups stay contiguous and
    numbered as in one batch); rollout seconds are the slowest worker's (the step waited that long)."""
    parts: dict[str, list[EnvRollout]] = defaultdict(list)
    seconds: dict[str, float] = defaultdict(float)
    conversations: list[ConversationPart] = []
    for batch in batches:
        for name, actor_parts in batch.parts.items():
            for part in actor_parts:
                same = next((i for i, p in enumerate(parts[name]) if p.env is part.env), None)
                if same is None:
                    parts[name].append(part)
                else:
                    parts[name][same] = _joined(parts[name][same], part, pad_ids[name])
        for name, value in batch.rollout_seconds.items():
            seconds[name] = max(seconds[name], value)
        for conversation in batch.conversations:
            same = next((i for i, c in enumerate(conversations) if c.env is conversation.env), None)
            if same is None:
                conversations.append(ConversationPart(conversation.env, list(conversation.row_indices), list(conversation.episodes)))
            else:
                # A worker numbers its groups from 0; in the step they follow the earlier workers' (advantages are
                # normalised within a group, and transcripts name groups by number).
                offset = len(conversations[same].row_indices)
                for episode in conversation.episodes:
                    episode.group += offset
                conversations[same].row_indices.extend(conversation.row_indices)
                conversations[same].episodes.extend(conversation.episodes)
    return StepBatch(parts, conversations, seconds, {})


def _joined(a: EnvRollout, b: EnvRollout, pad_id: int) -> EnvRollout:
    return EnvRollout(
        a.env, a.row_indices + b.row_indices, a.prompts + b.prompts, concat_rollouts([a.rollout, b.rollout], pad_id),
        a.rewards + b.rewards, a.components + b.components, a.advantages + b.advantages,
    )


# ---------------------------------------------------------------------- worker process


class GivenRows:
    """A worker environment's data: the rows the trainer drew for it this step (the run's samplers stay the trainer's)."""

    def __init__(self, rows: list[int]):
        self.rows = list(rows)

    def take(self, n: int) -> list[int]:
        if n > len(self.rows):
            raise RuntimeError(f"a rollout worker was given {len(self.rows)} rows and asked for {n} (dynamic sampling draws more: refused with rollout.workers)")
        out, self.rows = self.rows[:n], self.rows[n:]
        return out


class _Log:
    def __init__(self, out: Any):
        self.out = out

    def log(self, level: str, message: str) -> None:
        _put(self.out, ("log", level, message))


def _placed(samplers: dict[str, "Actor"], device: torch.device) -> dict[str, "Actor"]:
    """The sampling copies (built on the CPU) on the worker's device, each with an engine there."""
    if device.type == "cpu":
        return samplers
    out = {}
    for name, actor in samplers.items():
        module = actor.loaded.model.to(device)
        out[name] = dataclasses.replace(actor, device=device, engine=HFEngine(module, actor.loaded.tokenizer, device))
    return out


def _worker_main(index: int, port: int, size: int, placement: WorkerPlacement, commands: Any, out: Any) -> None:
    # The trainer decides when the run stops and closes us; a Ctrl-C sent to the process group must not kill a
    # worker under a trainer that is about to stop cleanly.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent = mp.parent_process()
    step: int | None = None
    closing: list[Any] = []
    attached: list[WeightSlots] = []
    try:
        device = take_device(placement, index)  # before the group: NCCL binds the process's current device
        _put(out, ("placed", index, placement.devices[index], str(device)))
        _put(out, ("started", index))
        store = dist.TCPStore(HOST, port, size, is_master=False, timeout=datetime.timedelta(seconds=CONNECT_S))
        group = weight_group(placement.backend, store, index + 1, size, CONNECT_S)
        setup = _next(commands, parent)
        if setup is None or setup[0] != "setup":
            return
        setup = setup[1]
        document, algorithm, seed = setup["document"], setup["algorithm"], setup["seed"]
        torch.set_num_threads(setup["threads"])
        rewards = bind_rewards(document, Path(setup["work_dir"]), {}, _Log(out))
        closing.extend(rewards.values())
        environments = build_run_environments(document, Path(setup["work_dir"]), rewards, only=setup["sampled"])
        samplers = _placed(_sampling_actors(setup["models"]), device)
        params = {(name, param): dict(samplers[name].loaded.model.named_parameters())[param] for name, param in setup["table"]}
        if setup["slots"] is not None:  # async: the weights come through the trainer's shared-memory slots
            slots = WeightSlots.attach(setup["slots"]["table"], setup["slots"]["names"])
            attached.append(slots)
            modules = {e.actor: samplers[e.actor].loaded.model for e in slots.table}
        with torch.inference_mode():
            while True:
                command = _next(commands, parent)
                if command is None or command[0] == "close":
                    out.cancel_join_thread()  # the trainer reads nothing more
                    return
                if command[0] == "step":
                    step, given, version = command[1], command[2], command[3]
                    seed_everything(step_seed(seed, step, index))
                    prompts = [len(rows) for rows in given]
                    for env, rows in zip(environments, given):
                        if env is not None:
                            env.sampler = GivenRows(rows)
                    started = time.monotonic()
                    batch = produce_batch(step, version, algorithm, seed, environments, prompts, samplers)
                    _put(out, ("batch", index, batch_state(batch, environments), time.monotonic() - started))
                elif command[0] == "weights" and attached:
                    attached[0].read(command[2], modules)
                elif command[0] == "weights":
                    for key in [k for k in params]:
                        for chunk in chunked(params[key].data, setup["chunk_bytes"]):
                            group.broadcast(chunk, 0).wait()
                elif command[0] == "weights?":
                    _put(out, ("weights", index, {key: p.detach().clone() for key, p in params.items()}))
    except BaseException:  # handed to the trainer by its next receive
        _put(out, ("error", index, step, traceback.format_exc()))
    finally:
        trainer_gone = parent is not None and not parent.is_alive()
        if trainer_gone:
            out.cancel_join_thread()  # nobody reads what is queued: exiting must not wait on it
        for slots in attached:
            # The trainer unlinks the slots when it closes us; gone without closing (kill -9), it never will: the
            # first worker to see that does (another may have already).
            with contextlib.suppress(FileNotFoundError):
                slots.close(unlink=trainer_gone)
        for reward in closing:  # sandboxed reward workers
            getattr(reward, "close", lambda: None)()
        exit_without_teardown(out)  # also after the early returns above (async_process.exit_without_teardown says why)


def _next(commands: Any, parent: Any) -> Any:
    """The trainer's next command; None once the trainer is gone without closing us (kill -9)."""
    while True:
        try:
            return _get(commands, POLL_S)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                return None
