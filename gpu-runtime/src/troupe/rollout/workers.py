"""Rollout workers (`rollout.workers: {count, processes: true}`): a pool of processes that sample, the trainer trains.

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

On policy: every batch is sampled with the weights after the previous update, as the synchronous loop does; the
workers only spread the sampling over processes. The rows are the synchronous loop's own (the trainer draws them
from its samplers, so checkpoints keep the data position); the sampling RNG is each worker's, seeded per step
from (seed, step, worker), so a run is the same run however the workers' timing falls, and resume is exact.

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
from ..engines.rollout.colocate import sleep_for_training
from ..engines.rollout.sampling import concat_rollouts
from ..envs.single_turn import EnvRollout
from ..envs.environment_kinds import build_run_environments
from ..rewards.binding import bind_rewards
from ..spec.runspec_types import Algorithm, RolloutWorkers
from ..host.system import seed_everything
from .async_process import _get, _put, _reimported_main, _sampling_actors, _trained
from .copy_blockers import CopyRefusals, copy_blockers
from .async_rollout import ProducedBatch, batch_from_state, batch_state, produce_batch
from .source import SamplingPlaces, StepBatch

if TYPE_CHECKING:
    from ..actors import Actor

POLL_S = 1.0  # how often a waiting side checks that the others are still alive
CHUNK_BYTES = 16 * 2**20  # one broadcast's most bytes: a parameter larger than this goes in several chunks
CONNECT_S = 120  # the gloo group's connect and collective timeout
HOST = "127.0.0.1"  # CPU workers run on the trainer's host


# What a worker process cannot carry (copy_blockers.py: the process producer's refusals, in our words).
REFUSALS = CopyRefusals(
    gpu="rollout.workers.processes: CPU rollout workers need a CPU trainer (GPU workers, rollout.workers.gpus, are not built yet)",
    in_process_rewards="rollout.workers: rewards passed in as Python objects cannot be rebuilt in a worker process",
    shared_base="rollout.workers: LoRA actors sharing one base module cannot be copied to a worker",
    own_engine="rollout.workers: an actor sampling with its own vLLM engine cannot be copied to a worker",
)


def workers_ok(actors: dict[str, "Actor"], rewards: dict[str, Any]) -> str | None:
    """None when the pool can run these actors and rewards; else why not (what spec/ cannot see: the actors'
    devices, rewards passed in as Python objects). The spec rules (spec/rollout_rules.py) refuse the rest by field."""
    return copy_blockers(actors, rewards, REFUSALS)


def split(n: int, count: int) -> list[int]:
    """`n` prompts over `count` workers, as even as can be, the first ones taking the remainder."""
    return [n // count + (1 if i < n % count else 0) for i in range(count)]


def step_seed(seed: int, step: int, worker: int) -> int:
    """Worker `worker`'s RNG seed at `step`: fixed by the run, not by timing (resume is exact)."""
    return (seed * 1_000_003 + step * 10_007 + worker) % 2**31


def chunks(tensor: torch.Tensor) -> list[torch.Tensor]:
    """Contiguous views of `tensor`'s elements, each at most CHUNK_BYTES: what one broadcast carries."""
    flat = tensor.view(-1)
    per = max(1, CHUNK_BYTES // max(tensor.element_size(), 1))
    return [flat[start : start + per] for start in range(0, flat.numel(), per)]


def _group(store: Any, rank: int, size: int) -> Any:
    options = dist.ProcessGroupGloo._Options()
    options._devices = [dist.ProcessGroupGloo.create_device(hostname=HOST)]
    options._timeout = datetime.timedelta(seconds=CONNECT_S)
    return dist.ProcessGroupGloo(store, rank, size, options)


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
    ) -> None:
        """`document`: the run's JSON document, which each worker rebuilds its environments and rewards from (their
        builders read it); what the pool itself reads comes typed: `rollout.workers`, the algorithm section and the
        run's seed."""
        self.environments, self.prompts_per_env, self.actors = environments, prompts_per_env, actors
        self.places, self.log, self.metric, self.report_memory = places, log, metric, report_memory
        self.count = workers.count
        sampled = {a for e, n in zip(environments, prompts_per_env) if n > 0 for a in e.actors}
        models = {name: (a.index, a.spec, a.section, a.loaded.model, a.loaded.tokenizer, a.loaded.description) for name, a in actors.items() if name in sampled}
        # What a worker samples with and an update changes: broadcast after every update, in this order.
        self.table = [(name, param) for name in models if actors[name].trainable for param, p in _trained(actors[name].loaded.model).items() if p.numel() > 0]
        setup = {
            "document": dict(document),
            "algorithm": algorithm,
            "seed": seed,
            "work_dir": str(work_dir),
            "sampled": [n > 0 for n in prompts_per_env],
            "models": models,
            "threads": max(1, torch.get_num_threads() // self.count),
            "table": self.table,
        }
        payload = pickle.dumps(("setup", setup), protocol=pickle.HIGHEST_PROTOCOL)  # before any start: a failure leaves no process
        self._closed = False
        self._processes: list[Any] = []
        self._commands: list[Any] = []
        self._group: Any = None
        context = mp.get_context("spawn")  # fork would copy the trainer's threads' locks mid-use
        self._results: Any = context.Queue()
        self._store = dist.TCPStore(HOST, 0, self.count + 1, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=CONNECT_S))
        try:
            for i in range(self.count):
                commands = context.Queue()
                process = context.Process(target=_worker_main, args=(i, self._store.port, self.count + 1, commands, self._results), name=f"troupe-rollout-worker-{i}", daemon=True)
                process.start()
                self._commands.append(commands)
                self._processes.append(process)
            started: set[int] = set()
            while len(started) < self.count:
                message = self._receive()
                if message[0] == "started":
                    started.add(message[1])
            self._group = _group(self._store, 0, self.count + 1)
            for commands in self._commands:
                commands.put(payload)
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
    def take(self, step: int) -> StepBatch:
        started = time.monotonic()
        with self.places.sampling(step):
            # The synchronous loop's rows, from the run's samplers (in spec order: one shared row RNG), split by worker.
            rows = [env.sampler.take(n) if env is not None and n > 0 else [] for env, n in zip(self.environments, self.prompts_per_env)]
            shares = [split(n, self.count) for n in self.prompts_per_env]
            for i, commands in enumerate(self._commands):
                given = []
                for env_rows, env_shares in zip(rows, shares):
                    begin = sum(env_shares[:i])
                    given.append(env_rows[begin : begin + env_shares[i]])
                _put(commands, ("step", step, given))
            batches: dict[int, ProducedBatch] = {}
            busy: dict[int, float] = {}
            while len(batches) < self.count:
                message = self._receive()
                if message[0] != "batch" or message[2]["step"] != step:
                    raise RuntimeError(f"rollout worker answered {message[0]!r} while step {step} was awaited")
                batches[message[1]] = batch_from_state(message[2], self.environments)
                busy[message[1]] = message[3]
        self.report_memory(step, "rollout")
        self.report_memory(step, "reward")
        sleep_for_training(self.places.actors)
        self._taken_at, self._waited, self._busy = started, time.monotonic() - started, [busy[i] for i in range(self.count)]
        return merge([batches[i] for i in range(self.count)], {name: a.loaded.tokenizer.pad_token_id for name, a in self.actors.items()})

    def publish(self, step: int) -> None:
        """The weights after update `step` to every worker: each trained parameter broadcast, chunk by chunk."""
        synced = time.monotonic()
        for i, process in enumerate(self._processes):
            if not process.is_alive():
                raise RuntimeError(self._death(i))
        for commands in self._commands:
            _put(commands, ("weights", step))
        try:
            with torch.no_grad():
                for name, param in self.table:
                    tensor = dict(self.actors[name].loaded.model.named_parameters())[param].detach()
                    if not tensor.is_contiguous():
                        tensor = tensor.contiguous()
                    for chunk in chunks(tensor):
                        self._group.broadcast(chunk, 0).wait()
        except RuntimeError as e:  # gloo's word for a peer gone mid-broadcast: say which worker, if one died
            for i, process in enumerate(self._processes):
                process.join(timeout=POLL_S)
                if not process.is_alive():
                    raise RuntimeError(self._death(i) + f" (during the weight broadcast after update {step})") from e
            raise
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

    def worker_weights(self) -> list[dict[tuple[str, str], torch.Tensor]]:
        """Every worker's copy of the broadcast parameters (for tests: they must equal the trainer's)."""
        for commands in self._commands:
            _put(commands, ("weights?",))
        answers: dict[int, dict[tuple[str, str], torch.Tensor]] = {}
        while len(answers) < self.count:
            message = self._receive()
            if message[0] != "weights":
                raise RuntimeError(f"rollout worker answered {message[0]!r} to a weights request")
            answers[message[1]] = message[2]
        return [answers[i] for i in range(self.count)]

    def quiesce(self) -> ContextManager[None]:
        """The workers are idle between steps, with their own RNGs: nothing to wait for."""
        return contextlib.nullcontext()

    def save_in_flight(self, folder: Path) -> None:
        """Nothing is in flight between steps (the rows came from the run's samplers, which the checkpoint saves)."""

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


def _worker_main(index: int, port: int, size: int, commands: Any, out: Any) -> None:
    # The trainer decides when the run stops and closes us; a Ctrl-C sent to the process group must not kill a
    # worker under a trainer that is about to stop cleanly.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent = mp.parent_process()
    step: int | None = None
    closing: list[Any] = []
    try:
        _put(out, ("started", index))
        store = dist.TCPStore(HOST, port, size, is_master=False, timeout=datetime.timedelta(seconds=CONNECT_S))
        group = _group(store, index + 1, size)
        setup = _next(commands, parent)
        if setup is None or setup[0] != "setup":
            return
        setup = setup[1]
        document, algorithm, seed = setup["document"], setup["algorithm"], setup["seed"]
        torch.set_num_threads(setup["threads"])
        rewards = bind_rewards(document, Path(setup["work_dir"]), {}, _Log(out))
        closing.extend(rewards.values())
        environments = build_run_environments(document, Path(setup["work_dir"]), rewards, only=setup["sampled"])
        samplers = _sampling_actors(setup["models"])
        params = {(name, param): dict(samplers[name].loaded.model.named_parameters())[param] for name, param in setup["table"]}
        with torch.inference_mode():
            while True:
                command = _next(commands, parent)
                if command is None or command[0] == "close":
                    out.cancel_join_thread()  # the trainer reads nothing more
                    return
                if command[0] == "step":
                    step, given = command[1], command[2]
                    seed_everything(step_seed(seed, step, index))
                    prompts = [len(rows) for rows in given]
                    for env, rows in zip(environments, given):
                        if env is not None:
                            env.sampler = GivenRows(rows)
                    started = time.monotonic()
                    batch = produce_batch(step, step - 1, algorithm, seed, environments, prompts, samplers)
                    _put(out, ("batch", index, batch_state(batch, environments), time.monotonic() - started))
                elif command[0] == "weights":
                    for key in [k for k in params]:
                        for chunk in chunks(params[key].data):
                            group.broadcast(chunk, 0).wait()
                elif command[0] == "weights?":
                    _put(out, ("weights", index, {key: p.detach().clone() for key, p in params.items()}))
    except BaseException:  # handed to the trainer by its next receive
        _put(out, ("error", index, step, traceback.format_exc()))
    finally:
        if parent is not None and not parent.is_alive():
            out.cancel_join_thread()  # nobody reads what is queued: exiting must not wait on it
        for reward in closing:  # sandboxed reward workers
            getattr(reward, "close", lambda: None)()


def _next(commands: Any, parent: Any) -> Any:
    """The trainer's next command; None once the trainer is gone without closing us (kill -9)."""
    while True:
        try:
            return _get(commands, POLL_S)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                return None
