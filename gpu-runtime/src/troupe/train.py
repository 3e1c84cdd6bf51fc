"""The training loop, top to bottom: set up, then each step roll out -> score -> learn -> report -> evaluate ->
checkpoint.

The loop only orders the parts; each part is a folder with one interface (gpu-runtime/ARCHITECTURE.md):
a `RolloutSource` (rollout/: synchronous, thread or process producer) hands over a step's scored episodes,
a learner (algorithms/: `OnPolicyLearner` for the GRPO and PPO families, `OfflineLearner` for sft/dpo)
turns them into updates, and the report phase writes the step's metrics and episodes.
"""

from __future__ import annotations

import contextlib
import sys
import time
import types
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np
import torch

from .actors import Actor, build_actors
from .algorithms.learner import LearnerSetup, build_learner, row_learner
from .algorithms.on_policy import reference_name
from .algorithms.on_policy import to_device as to_device  # compat: tests/test_vllm_gpu.py imports it from here
from .algorithms.training_shares import Share
from .algorithms.update_loss import resolve_liger
from .control import step_boundary
from .checkpointing import checkpoints_root, load_training_checkpoint, prune_checkpoints, save_training_checkpoint
from .control import RunControl
from .launch.distributed import SINGLE, RankContext
from .engines.rollout.colocate import attach_engines, close_engines, engine_of, sleep_for_training, wake_for_rollout
from .envs.acting import environment_metrics
from .envs.environment_kinds import build_run_environments
from .envs.environments import allocate_prompts
from .evaluation import evaluate
from .library import train as train_environment
from .events import EventWriter
from .residency.manager import Resident, ResidencyManager, offload_between_phases
from .rewards.binding import bind_rewards
from .rewards.reward_api import ApiActorHandle, EngineActorHandle, InProcessReward, RewardFunction
from .rollout.async_process import ProcessRolloutProducer, process_producer_ok
from .rollout.async_rollout import RolloutProducer, load_in_flight
from .rollout.source import ProducerSource, RolloutSource, SamplingPlaces
from .rollout.sections import SourceSetup, open_rollout_section
from .rollout.sync import SyncRollout
from .host.system import memory_readings, reset_memory_peaks, resolve_device, seed_everything, set_cpu_threads
from .reporting.transcripts import emit_episodes
from .advisories import Advisor
from .ratings import Rater
from .reporting.turn_metrics import turn_metrics
from .host.device_choice import run_device_choice
from .residency.host_buffers import HostBuffers
from .engines.rollout import static_decode
from .spec.runspec_types import RunSpec, Trainer, to_dict


class StopSignal(Protocol):
    """Anything with `is_set()` (a threading.Event works); `reason` is reported when present."""

    def is_set(self) -> bool: ...


def report_memory(events: EventWriter, step: int, phase: str, devices: Sequence[torch.device], actor: str | None = None) -> None:
    """The host's reading and one per device the actors are placed on (`placed_devices`), each once."""
    read: set[str] = set()
    for device in devices:
        for reading in memory_readings(device):
            if str(reading["device"]) not in read:
                read.add(str(reading["device"]))
                events.memory(step=step, phase=phase, actor=actor, **reading)  # type: ignore[arg-type]
        reset_memory_peaks(device)  # so the next phase's peak is its own


def reset_peaks(devices: Sequence[torch.device]) -> None:
    """The next phase's peaks start now, on every device the actors are placed on (and the host)."""
    for device in devices:
        reset_memory_peaks(device)


def placed_devices(actors: dict[str, Actor], run_device: torch.device) -> list[torch.device]:
    """Where the actors are placed (each actor carries its device), in first-placed order; the run's device when
    no actor is local (API actors only): the memory readings are taken there."""
    return list(dict.fromkeys(a.device for a in actors.values())) or [run_device]


def build_residency(trainer: Trainer, actors: dict[str, Actor], events: EventWriter) -> ResidencyManager:
    """One manager for every local model: trainable actors (params + optimizer), frozen ones and KL references."""
    between = offload_between_phases(trainer, {name: a.device for name, a in actors.items()})
    residency = ResidencyManager(between, report=events.offload)
    for name, a in actors.items():
        offload = a.section.training.offload
        if a.backend is not None:
            residency.add(Resident(name, a.device, backend=a.backend, offload_params=offload.params, offload_optimizer=offload.optimizer, shared_params=a.shares_base))
        else:
            residency.add(Resident(name, a.device, module=a.loaded.model))
        if a.reference is not None:
            residency.add(Resident(reference_name(name), a.device, module=a.reference))
    if between:
        events.log("info", "offloading between phases: only the active model's training state stays on the device (trainer.offloadBetweenPhases)")
    if any(a.device.type == "cuda" for a in actors.values()):
        started = time.perf_counter()  # pinned host buffers now, not in the first offload (host_buffers.py)
        reserved = residency.prepare_host_buffers(HostBuffers(pin=True))
        if reserved:
            events.log("info", f"pinned {reserved / 2**30:.2f} GiB of host buffers for offload in {time.perf_counter() - started:.1f}s (reused by every move)")
    return residency




def bind_actor_handles(environments: list[Any], rewards: dict[str, Any], actors: dict[str, Actor], api_actors: dict[str, Any], events: EventWriter) -> None:
    """Judges: rewards with an `actors` parameter may ask the run's frozen actors to generate. Acting environments
    may generate from any actor of the run (what is said through a handle is not trained on)."""
    judges: dict[str, Any] = {n: ApiActorHandle(n, a) for n, a in api_actors.items()}
    # The handles hand their sampling settings on as a document (rewards/reward_api.py merges a token limit into it).
    judges.update({n: EngineActorHandle(n, engine_of(a), a.loaded.tokenizer, to_dict(a.section.sampling)) for n, a in actors.items() if not a.trainable})
    for reward in rewards.values():
        if isinstance(reward, InProcessReward):
            reward.actors = judges
    handles = {**judges, **{n: EngineActorHandle(n, engine_of(a), a.loaded.tokenizer, to_dict(a.section.sampling)) for n, a in actors.items() if a.trainable}}
    for env in environments:
        env.bind(handles, events.log)


def plan_prompts(run: RunSpec, environments: list[Any], actors: dict[str, Actor], api_actors: dict[str, Any], events: EventWriter) -> list[int]:
    """Each environment's prompts per step (eval-only environments draw none: evaluation.py evaluates them).
    `environments` are built in the order of the spec's (envs/environment_kinds.py): each is read through its
    typed section, as the trainer and algorithm are."""
    trainer, sections = run.trainer, run.environments
    unused = [name for name in [*actors, *api_actors] if not any(name in section.actors for section in sections)]
    if unused:
        events.log("warning", f"actors in no environment (never trained): {', '.join(unused)}")
    prompts_per_env = allocate_prompts(trainer.prompts_per_step, [0.0 if section.eval_only else section.weight for section in sections])
    events.log(
        "info",
        f"{trainer.steps} steps x {trainer.prompts_per_step} prompts x {run.algorithm.group_size} samples; "
        + ", ".join(f'"{env.name}": {n} prompts/step' for env, n in zip(environments, prompts_per_env)),
    )
    return prompts_per_env


def open_rollout_source(
    run: RunSpec, spec: dict[str, Any], environments: list[Any], prompts_per_env: list[int], actors: dict[str, Actor], api_actors: dict[str, Any],
    rewards: dict[str, Any], first_step: int, work_dir: Path, events: EventWriter, resume_from: Path | None,
    places: SamplingPlaces, memory: Any, rank: int = 0,
) -> RolloutSource:
    """algorithm.async: a producer process (async_process.py) or thread (async_rollout.py) samples the next
    batches while this one trains; else each step samples its own batch (sync.py). Each source gets its typed
    sections; `spec`, the run's document, only goes to the processes that rebuild environments and rewards from it.
    Every actor samples on its own device. With several ranks every rank opens its own source, as every rank of
    the synchronous loop samples the step's batch (rank 0's is the one trained on, on_policy.py); `rank` names
    the in-flight file its producer saves and resumes from."""
    algorithm, steps = run.algorithm, run.trainer.steps
    setup = SourceSetup(run.rollout, algorithm, run.seed, spec, environments, prompts_per_env, actors, rewards, places, work_dir, events, memory, steps, first_step, resume_from)
    chosen = open_rollout_section(setup)
    if chosen is not None:  # the spec's `rollout` section names its source (rollout/sections.py)
        return chosen
    if algorithm.async_ is None or first_step > steps:
        return SyncRollout(algorithm, run.seed, places, api_actors, memory)
    queued, producer_state = load_in_flight(resume_from, environments, rank) if resume_from else ([], None)
    why_thread = process_producer_ok(algorithm, actors, rewards)
    producer: RolloutProducer | ProcessRolloutProducer
    if why_thread is None:
        producer = ProcessRolloutProducer(spec, algorithm, run.seed, steps, environments, prompts_per_env, actors, first_step, work_dir, events.log, queued, producer_state, rank)
        events.log("info", f"asynchronous rollouts: a producer process (pid {producer.pid}) samples up to {algorithm.async_.max_staleness} updates behind the trainer")
    else:
        producer = RolloutProducer(algorithm, run.seed, steps, environments, prompts_per_env, actors, first_step, queued, work_dir, rank)
        events.log("info", f"asynchronous rollouts: a producer thread ({why_thread})")
    return ProducerSource(producer, places, memory)


def report_checkpoint(events: EventWriter, work_dir: Path, step: int, saved: list[Any], keep: int) -> None:
    """The checkpoint's parts as events, and the folders `trainer.keepCheckpoints` prunes."""
    for part in saved:
        events.checkpoint(step=step, path=str(part.path), actor=part.actor, size_bytes=part.size_bytes)
    for removed in prune_checkpoints(checkpoints_root(work_dir), keep):
        events.log("info", f"removed checkpoint {removed.path.name} (trainer.keepCheckpoints={keep})")
        events.checkpoint_pruned(step=removed.step, path=str(removed.path), keep_checkpoints=keep)


def reward_metrics(shares: list[Share]) -> dict[str, float]:
    """An actor's step rewards: mean and spread, and each named reward's."""
    all_rewards = torch.tensor([r for sh in shares for r in sh.rewards])
    values = {"reward/mean": float(all_rewards.mean()), "reward/std": float(all_rewards.std(correction=0))}
    for reward_name in sorted({n for sh in shares for c in sh.components for n in c}):
        per_sample = [c[reward_name] for sh in shares for c in sh.components if reward_name in c]
        values[f"reward/{reward_name}"] = float(np.mean(per_sample))
        values[f"reward/{reward_name}/std"] = float(np.std(per_sample))
    return values


def train(
    spec: dict[str, Any],
    events: EventWriter,
    work_dir: Path,
    stop: StopSignal | None = None,
    control: RunControl | None = None,
    resume_from: Path | None = None,
    library_rewards: dict[str, RewardFunction] | None = None,
    ctx: RankContext = SINGLE,
) -> tuple[str, str, int]:
    """`run_loop` with the spec's rewards, whose sandboxed workers are closed however the loop ends."""
    rewards = bind_rewards(spec, work_dir, library_rewards or {}, events)
    closing = contextlib.ExitStack()  # environments that hold resources (acting.py) close here too
    try:
        return run_loop(spec, events, work_dir, rewards, stop, control, resume_from, ctx, closing=closing)
    finally:
        closing.close()
        for reward in rewards.values():
            getattr(reward, "close", lambda: None)()


def run_loop(
    spec: dict[str, Any],
    events: EventWriter,
    work_dir: Path,
    rewards: dict[str, Any],
    stop: StopSignal | None = None,
    control: RunControl | None = None,
    resume_from: Path | None = None,
    ctx: RankContext = SINGLE,
    closing: contextlib.ExitStack | None = None,
) -> tuple[str, str, int]:
    """Run a validated, supported spec. Returns (final state, message, steps completed).

    `stop` (SIGTERM/SIGINT) cancels between steps; `control` pauses, resumes or stops after a
    step with a checkpoint; `resume_from` continues from a checkpoint folder (see checkpointing.py).
    With several ranks (`ctx`, distributed.py) every rank runs this same loop; rank 0's `events` and
    `control` are the run's, and its decisions at each step boundary are every rank's.
    """
    started = time.monotonic()
    run = RunSpec.from_dict(spec)  # typed, once; `spec` stays the document (events, checkpoints, the parts that read it)
    trainer, group_size = run.trainer, run.algorithm.group_size
    total_steps = trainer.steps

    # ------------------------------------------------------------------ setup
    seed_everything(run.seed)
    set_cpu_threads(trainer.cpu_threads)
    device = resolve_device(run_device_choice(spec), ctx.local_rank)  # the rank's: where unplaced actors go
    events.log(
        "info",
        f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} CPU threads, seed {run.seed}"
        + (f", {ctx.world_size} ranks" if ctx.distributed else ""),
    )
    liger_cls = resolve_liger(device)  # None on CPU or without liger-kernel: the torch loss path
    if liger_cls is not None:
        events.log("info", "policy loss: Liger fused linear GRPO loss where the loss type maps onto it")

    environments: list[Any] = build_run_environments(run, work_dir, rewards)
    for env in environments:
        if closing is not None:
            closing.callback(env.close)  # environments that hold resources (acting.py)
    for env in environments:
        for note in env.notes:
            events.log("warning", note)

    actors, api_actors = build_actors(run, work_dir, device, ctx, events.log, document=spec)
    placed = placed_devices(actors, device)

    def memory(step: int, phase: str, actor: str | None = None) -> None:
        report_memory(events, step, phase, placed, actor)

    attach_engines(run, actors, work_dir, ctx.distributed, events.log)  # vLLM actors sample with their own engine
    if closing is not None:
        closing.callback(close_engines, actors)
        closing.callback(static_decode.on_compile(lambda r: events.log("info", static_decode.describe(r))))
    residency = build_residency(trainer, actors, events)
    learner = build_learner(LearnerSetup(spec, actors, environments, residency, ctx, work_dir, events.log, memory, liger_cls, device, run))
    bind_actor_handles(environments, rewards, actors, api_actors, events)
    prompts_per_env = plan_prompts(run, environments, actors, api_actors, events)
    first_step = 1
    if resume_from is not None:
        # After every model, optimizer and sampler exists (setup drew from the RNGs): overwrite them all.
        done, warnings = load_training_checkpoint(resume_from, spec, actors, environments)
        for warning in warnings:
            events.log("warning", warning)
        learner.load(resume_from)
        events.log("info", f"resumed from {resume_from} (step {done} of {total_steps}): next step {done + 1}")
        first_step = done + 1
    memory(first_step - 1, "setup")
    events.watch(advisor := Advisor.for_run(run))  # health advisories from the run's own events (advisories/)
    places = SamplingPlaces(actors, environments, prompts_per_env, residency, events.log, first_step, arranged=lambda: reset_peaks(placed))
    source = open_rollout_source(run, spec, environments, prompts_per_env, actors, api_actors, rewards, first_step, work_dir, events, resume_from, places, memory, ctx.rank)
    if closing is not None:
        closing.callback(source.close)  # also when the loop raises (close is idempotent)

    def finish(state: str, message: str, steps: int) -> tuple[str, str, int]:
        source.close()
        return state, message, steps

    rater = Rater.for_run(trainer, run.seed, environments, actors, residency, ctx.distributed, events.log)

    def save(step: int) -> None:
        # With async rollouts: once the producer is idle (the RNG state is then after every batch it made), with those batches.
        with source.quiesce():
            folder, saved = save_training_checkpoint(checkpoints_root(work_dir), step, spec, actors, environments, ctx)
            learner.save(folder)
            source.save_in_flight(folder)  # each rank's producer its own file (async_rollout.in_flight_file)
            ctx.barrier()  # the checkpoint is whole (every rank's batches in flight) before anyone goes on
            rater.at_checkpoint(step, events, ctx.is_main)  # Elo per checkpoint in game environments (ratings/)
        if ctx.is_main:
            report_checkpoint(events, work_dir, step, saved, trainer.keep_checkpoints)
            memory(step, "checkpoint")

    last_step_seconds, paused_seconds, last_saved = 0.0, 0.0, first_step - 1 if resume_from is not None else -1
    offline = row_learner(learner)  # trains on dataset rows: no rollout

    def over_limit(pausing: float) -> str | None:
        limit = trainer.max_duration_seconds
        elapsed = time.monotonic() - started - paused_seconds - pausing
        if limit and step > 1 and elapsed + last_step_seconds > limit:
            return (
                f"stopped after step {step - 1} of {total_steps}: maxDurationSeconds={limit} would be exceeded "
                f"({elapsed:.1f}s elapsed, last step took {last_step_seconds:.1f}s)"
            )
        return None

    def run_eval(step: int) -> None:
        # Every actor samples as in a rollout: on the device, and a colocated engine awake with the trainer's
        # latest weights (it slept through the update); asleep again afterwards, as the update phase expects.
        residency.for_rollout(n for n in actors)
        wake_for_rollout(actors)
        evaluate(events, step, environments, actors, api_actors=api_actors, seed=run.seed)
        sleep_for_training(actors)

    if total_steps == 0:
        # An eval-only run (trainer.steps 0): every environment once, reported at step 0; nothing is trained.
        run_eval(0)
        return "succeeded", f"evaluated {len(environments)} environment(s) once; trainer.steps is 0, so nothing was trained", 0

    for step in range(first_step, total_steps + 1):
        # ---------------------------------------------------------- step boundary: controls
        boundary = step_boundary(step, total_steps, ctx, events, control, stop, over_limit)
        paused_seconds += boundary.paused_seconds
        if boundary.action == "stop":
            if last_saved != step - 1:
                save(step - 1)
            return finish("stopped", boundary.message, step - 1)
        if boundary.action == "cancel":
            return finish("cancelled", boundary.message, step - 1)
        if boundary.action == "limit":
            events.log("info", boundary.message)
            return finish("succeeded", boundary.message, step - 1)
        residency.step = step
        step_started = time.monotonic()
        offload_mark = residency.moved_seconds  # time/offload_s: this step's moves, every actor's
        due = lambda every: every > 0 and (step % every == 0 or step == total_steps)  # noqa: E731

        if offline is not None:
            # -------------------------------------------------------------- offline learners (sft, dpo): no rollout
            for name, values in offline.step(step).items():
                events.metric(step, {**values, "step_time_s": time.monotonic() - step_started}, actor=name)
            last_step_seconds = time.monotonic() - step_started
            if due(trainer.eval_every):
                for name, values in offline.evaluate().items():
                    events.metric(step, values, actor=name)
                if any(env.spec["rewards"] for env in environments):  # listed rewards are evaluated, not trained on
                    run_eval(step)
            advisor.report(events, step)  # the offline learners' health advisories (advisories/detectors/offline.py)
            if due(trainer.checkpoint_every):
                save(step)
                last_saved = step
            continue

        # -------------------------------------------------------------- roll out and score (rollout/)
        batch = source.take(step)
        # -------------------------------------------------------------- learn (algorithms/)
        updates, shares_of = learner.learn(step, batch)
        # -------------------------------------------------------------- report: per-step metrics and episodes
        last_step_seconds = time.monotonic() - step_started
        for name, update in updates.items():
            values = {**reward_metrics(shares_of[name]), **update, **environment_metrics(batch.conversations, name)}
            values.update(turn_metrics(batch.conversations, name))  # per turn index of its conversations (turn_metrics.py)
            values["step_time_s"] = last_step_seconds
            values["time/offload_s"] = residency.moved_seconds - offload_mark
            events.metric(step, values, actor=name)
        trained_names = {name for name, a in actors.items() if a.trainable}
        emit_episodes(events, step, [p for env_parts in batch.parts.values() for p in env_parts], batch.conversations, trained_names, group_size, trainer.episodes_per_step)

        # -------------------------------------------------------------- eval
        if due(trainer.eval_every):
            with source.quiesce():  # eval draws from the shared RNG
                run_eval(step)
        advisor.report(events, step)
        # -------------------------------------------------------------- checkpoint
        if due(trainer.checkpoint_every):
            save(step)
            last_saved = step
        source.publish(step)  # the weights after this update, for the batch that will be sampled with them

    return finish("succeeded", f"finished {total_steps} steps", total_steps)


class _CallableTrainModule(types.ModuleType):
    """`troupe.train` names two things: this module (the loop, `from troupe.train import run_loop`) and the
    library's `troupe.train(env, steps=...)` (library/__init__.py), which the package exports. Importing this
    module rebinds the package's attribute to the module, so the module answers that call itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return train_environment(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableTrainModule
