"""Asynchronous rollouts in a producer process (`algorithm.async.maxStaleness: K >= 1` on a CPU host).

The thread producer (async_rollout.py) overlaps little on a CPU: transformers' `generate` on a small model is
mostly per-token Python, and the producer thread holds the GIL against the trainer thread (measured: async ran
at 0.97x the synchronous step time under load, 0.71x at best). A process has its own interpreter, so sampling
and training really run side by side. It is the same schedule as the thread's: the batch of step t is sampled
with the weights after exactly max(b, t - 1 - K) updates, so a run is the same run however the two processes'
timing falls.

    trainer (this process)                       producer process (spawned)
    take(t): wait for batch t on `batches`       builds its own environments and rewards from the spec, and a
    update with it                                 sampling copy of each trainable actor (the trainer's module,
    publish(t): the trained parameters ->          pickled once at start), with the trainer's data position and
      `commands` (by value, never disk)           torch RNG state; for t = next, next + 1, ...: wait for weights
    checkpoint: asks for the producer's            version max(b, t - 1 - K) on `commands`, load them, sample +
      RNG and data position once it is idle        score + dynamic sampling, put the batch on `batches`

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
import multiprocessing as mp
import pickle
import queue
import signal
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from .async_rollout import IN_FLIGHT_FILE, ProducedBatch, batch_from_state, batch_state
from .models import LoadedModel
from .rollout_engines import HFEngine

if TYPE_CHECKING:
    from .actors import Actor

POLL_S = 1.0  # how often a waiting side checks that the other is still alive


def _put(q: Any, message: Any) -> None:
    """By value: torch's own pickling for queues passes a tensor as a file descriptor that the receiver fetches from
    the sender's resource sharer, which fails once the sender has exited and hung here while both lived; bytes
    through the pipe cannot. On the CPU hosts this producer serves, the models are small enough for the copy."""
    q.put(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _get(q: Any, timeout: float) -> Any:
    return pickle.loads(q.get(timeout=timeout))


def process_producer_ok(spec: dict[str, Any], actors: dict[str, "Actor"], rewards: dict[str, Any], device: torch.device) -> str | None:
    """None when the producer can be a process; else why it stays a thread (logged)."""
    from .reward_api import InProcessReward

    if int(spec["algorithm"]["async"]["maxStaleness"]) == 0:
        return "maxStaleness 0 samples each batch after the previous update: nothing to overlap"
    if device.type != "cpu" or any(a.device.type != "cpu" for a in actors.values()):
        return "the producer process runs on CPU hosts only (on a GPU both would share the device)"
    if any(isinstance(r, InProcessReward) for r in rewards.values()):
        return "rewards passed in as Python objects cannot be rebuilt in another process"
    if any(a.shares_base for a in actors.values()):
        return "LoRA actors sharing one base module are copied as one"
    return None


def _trained(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The parameters an update changes (all of a full-weight actor; a LoRA actor's adapter)."""
    return {n: p.detach().clone() for n, p in module.named_parameters() if p.requires_grad}


class ProcessRolloutProducer:
    """The trainer's side of the producer process; the same interface as `RolloutProducer`."""

    def __init__(
        self,
        spec: dict[str, Any],
        environments: list[Any],
        prompts_per_env: list[int],
        actors: dict[str, "Actor"],
        device: torch.device,
        first_step: int,
        work_dir: Path,
        log: Any,
        queued: list[ProducedBatch] | None = None,
        state: dict[str, Any] | None = None,
    ):
        self.environments, self.log = environments, log
        self.max_staleness = int(spec["algorithm"]["async"]["maxStaleness"])
        self.total_steps = int(spec["trainer"]["steps"])
        self.actors = actors
        queued = sorted(queued or [], key=lambda b: b.step)
        if [b.step for b in queued] != list(range(first_step, first_step + len(queued))):
            raise ValueError(f"in-flight batches {[b.step for b in queued]} do not continue from step {first_step}")
        self._ready: dict[int, ProducedBatch] = {b.step: b for b in queued}
        # Where the producer starts: a checkpoint's saved producer state, else this process's (fresh run).
        state = state or {"torch_rng": torch.get_rng_state(), "samplers": [e.sampler.state() for e in environments]}
        sampled = {e.actor for e, n in zip(environments, prompts_per_env) if n > 0}
        models = {
            name: (a.index, a.spec, a.loaded.model, a.loaded.tokenizer, a.loaded.description)
            for name, a in actors.items()
            if name in sampled
        }
        setup = {
            "spec": spec,
            "work_dir": str(work_dir),
            "prompts_per_env": prompts_per_env,
            "models": models,
            "threads": torch.get_num_threads(),
            "first_step": first_step + len(queued),
            "base": first_step - 1,
            "state": state,
        }
        payload = pickle.dumps(("setup", setup), protocol=pickle.HIGHEST_PROTOCOL)  # before the start: a failure leaves no process
        context = mp.get_context("spawn")  # fork would copy the trainer's threads' locks mid-use
        self._commands: Any = context.Queue()
        self._batches: Any = context.Queue()
        # Only the two queues as arguments: `start()` writes the arguments into a pipe and returns once the child
        # has read them, which it does after importing torch (seconds), and never if it dies first (the parent keeps
        # the pipe's read end open until the write is done: it hung for good under a script without a main guard).
        self._process = context.Process(target=_producer_main, args=(self._commands, self._batches), name="troupe-rollout-producer", daemon=True)
        self._process.start()
        # The setup (the actors' modules) is the first command; the queue's feeder thread writes it while the trainer
        # goes on, and `_receive`'s liveness check reports a child that died before reading it.
        self._commands.put(payload)
        self._started = False  # the child's own code ran (it said so): a death before that was in spawn's bootstrap
        self._closed = False

    @property
    def pid(self) -> int | None:
        return self._process.pid

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
        """After update `version`: the trained parameters, for the batch that will be sampled with them."""
        if version + 1 + self.max_staleness > self.total_steps:
            return  # no batch will be sampled with it
        weights = {name: _trained(self.actors[name].loaded.model) for name in self.actors if self.actors[name].trainable}
        _put(self._commands, ("weights", version, weights))

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
        partial = folder / f".{IN_FLIGHT_FILE}.partial"
        torch.save({"batches": saved, "producer": state}, partial)
        partial.rename(folder / IN_FLIGHT_FILE)
        return len(saved)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._process.is_alive():
            _put(self._commands, ("close",))
            self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        for q in (self._commands, self._batches):
            q.close()
            q.cancel_join_thread()  # what is still queued is not waited for


# ---------------------------------------------------------------------- producer process


class _Log:
    def __init__(self, out: Any):
        self.out = out

    def log(self, level: str, message: str) -> None:
        _put(self.out, ("log", level, message))


def _sampling_actors(models: dict[str, tuple[Any, ...]], device: torch.device) -> dict[str, "Actor"]:
    from .actors import Actor

    actors = {}
    for name, (index, spec, module, tokenizer, description) in models.items():
        module.eval()
        actors[name] = Actor(index, spec, LoadedModel(module, tokenizer, description), None, None, "", device, engine=HFEngine(module, tokenizer, device))
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
    try:
        received = _receive_setup(commands, parent)
        if received is None:
            out.cancel_join_thread()  # nobody reads what is queued
            return
        setup: dict[str, Any] = received
        step = setup["first_step"]
        from .async_rollout import produce_single_turn
        from .environment_kinds import build_run_environments
        from .system import seed_everything
        from .train import bind_rewards

        spec, work_dir = setup["spec"], Path(setup["work_dir"])
        torch.set_num_threads(setup["threads"])
        seed_everything(spec["seed"])
        device = torch.device("cpu")
        rewards = bind_rewards(spec, work_dir, {}, _Log(out))
        sampled = [n > 0 for n in setup["prompts_per_env"]]
        environments = build_run_environments(spec, work_dir, rewards, only=sampled)
        for env, position in zip(environments, setup["state"]["samplers"]):
            if env is not None:
                env.sampler.load_state(position)
        torch.set_rng_state(setup["state"]["torch_rng"])
        samplers = _sampling_actors(setup["models"], device)
        live = [e for e in environments if e is not None]
        prompts = [n for e, n in zip(environments, setup["prompts_per_env"]) if e is not None]
        base, loaded, total, k = setup["base"], setup["base"], int(spec["trainer"]["steps"]), int(spec["algorithm"]["async"]["maxStaleness"])
        closing.extend(rewards.values())
        with torch.inference_mode():
            while True:
                needed = max(base, step - 1 - k)
                if step <= total and needed == loaded:
                    batch = produce_single_turn(step, loaded, spec, live, prompts, samplers, device)
                    _put(out, ("batch", batch_state(batch, environments)))
                    step += 1
                    continue
                try:
                    command = _get(commands, POLL_S)
                except queue.Empty:
                    if parent is not None and not parent.is_alive():
                        # The trainer died without closing us. Batches nobody will read may fill the pipe: exiting must
                        # not wait for the queue's feeder thread to write them (a producer outlived a kill -9 that way).
                        out.cancel_join_thread()
                        return
                    continue
                if command[0] == "close":
                    out.cancel_join_thread()  # the trainer reads nothing more
                    return
                if command[0] == "state":  # idle: every batch it may make is made
                    _put(out, ("state", {"torch_rng": torch.get_rng_state(), "samplers": [_position(e, setup, i) for i, e in enumerate(environments)]}))
                elif command[0] == "weights":
                    version, weights = command[1], command[2]
                    for name, params in weights.items():
                        if name in samplers:
                            named = dict(samplers[name].loaded.model.named_parameters())
                            for key, value in params.items():
                                named[key].copy_(value)
                    if version > needed:
                        raise RuntimeError(f"weights of update {version} arrived while update {needed} was awaited")
                    loaded = version
    except BaseException:  # handed to the trainer by its next take()
        _put(out, ("error", step, traceback.format_exc()))
    finally:
        for reward in closing:  # sandboxed reward workers
            getattr(reward, "close", lambda: None)()


def _position(env: Any, setup: dict[str, Any], index: int) -> dict[str, Any]:
    """A sampled environment's data position; an unsampled one keeps the position it came with."""
    return env.sampler.state() if env is not None else setup["state"]["samplers"][index]

