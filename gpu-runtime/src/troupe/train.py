"""The training loop, top to bottom: set up, then each step roll out -> score -> update -> report.

Everything a step does is in `train` below, in the order it happens; the math lives in pure
functions (`grpo.py`, `lr_schedule.py`), sampling in `rollout.py`, log-probs in `policy.py`, a
single-turn environment's rollout and scoring in `single_turn.py`, what each actor trains on in
`training_shares.py`, held-out evaluation in `evaluation.py`.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from .schedule import sample as dsl_sample
from .actors import Actor, build_actors
from .envs.acting import ActingEnvironment, environment_metrics
from .envs.collaborative import CollaborativeEnvironment, run_turns, schedule_seed
from .envs.environment_kinds import build_run_environments
from .distributed import SINGLE, RankContext
from .envs.environments import allocate_prompts
from .events import EventWriter
from .algorithms.grpo import group_advantages
from .engines.train.policy import completion_logprobs
from .algorithms.update import update_actor
from .algorithms.update_loss import LossOptions, entropy_coef_of, resolve_liger, tis_cap_of
from .rewards.python_rewards import PythonReward, bind_python_reward
from .rewards.reward_api import ApiActorHandle, EngineActorHandle, InProcessReward, RewardFunction, bind_in_process
from .residency.manager import Resident, ResidencyManager, offload_between_phases
from .rewards.builtin import bind_reward
from .engines.rollout.sampling import Rollout, _pad_to, concat_rollouts
from .algorithms.lr_schedule import lr_at
from .models.lora import adapters_disabled
from .checkpointing import checkpoints_root, load_training_checkpoint, prune_checkpoints, save_training_checkpoint
from .rollout.async_process import ProcessRolloutProducer, process_producer_ok
from .rollout.async_rollout import RolloutProducer, load_in_flight
from .control import RunControl
from .boundary import step_boundary
from .transcripts import emit_episodes
from .system import memory_readings, reset_memory_peaks, resolve_device, seed_everything, set_cpu_threads
from .evaluation import evaluate
from .algorithms.learners import family
from .algorithms.learners.offline_loop import OfflineLearner
from .algorithms.learners import ppo
from .engines.rollout.colocate import attach_engines, close_engines, engine_of, sleep_for_training, wake_for_rollout
from .envs.single_turn import EnvRollout, draw_single_turn, refill_groups, score_single_turn
from .algorithms.training_shares import ConversationPart, Share, actor_shares


class StopSignal(Protocol):
    """Anything with `is_set()` (a threading.Event works); `reason` is reported when present."""

    def is_set(self) -> bool: ...


def report_memory(events: EventWriter, step: int, phase: str, device: torch.device, actor: str | None = None) -> None:
    for reading in memory_readings(device):
        events.memory(step=step, phase=phase, actor=actor, **reading)  # type: ignore[arg-type]
    reset_memory_peaks(device)  # so the next phase's peak is its own


def build_residency(spec: dict[str, Any], actors: dict[str, Actor], events: EventWriter) -> ResidencyManager:
    """One manager for every local model: trainable actors (params + optimizer), frozen ones and KL references."""
    between = offload_between_phases(spec, {name: a.device for name, a in actors.items()})
    residency = ResidencyManager(between, report=events.offload)
    for name, a in actors.items():
        offload = a.spec["training"]["offload"]
        if a.backend is not None:
            residency.add(Resident(name, a.device, backend=a.backend, offload_params=offload["params"], offload_optimizer=offload["optimizer"], shared_params=a.shares_base))
        else:
            residency.add(Resident(name, a.device, module=a.loaded.model))
        if a.reference is not None:
            residency.add(Resident(reference_name(name), a.device, module=a.reference))
    if between:
        events.log("info", "offloading between phases: only the active model's training state stays on the device (trainer.offloadBetweenPhases)")
    return residency


def reference_name(actor: str) -> str:
    return f"{actor}/reference"


def reference_logprobs(actor: Actor) -> Any:
    """The KL reference's log-probs of a micro-batch (None without KL): the frozen copy, or for LoRA the
    same model with its adapters off."""
    if actor.spec["training"]["klBeta"] <= 0:
        return lambda batch: None

    def compute(batch: Rollout) -> torch.Tensor:
        if actor.reference is not None:
            return completion_logprobs(actor.reference, batch, actor.temperature)[0]
        model = actor.loaded.model
        was_training = model.training
        model.eval()
        with adapters_disabled(model):
            logp = completion_logprobs(model, batch, actor.temperature)[0]
        model.train(was_training)
        return logp

    return compute


def store_advantages(shares: list[Share], per_row: list[float]) -> None:
    """Each share's rows' advantages, kept with its episodes (transcripts show them)."""
    offset = 0
    for sh in shares:
        sh.set_advantages(per_row[offset : offset + len(sh.rewards)])
        offset += len(sh.rewards)


def to_device(batch: Rollout, device: torch.device) -> Rollout:
    if batch.completion_ids.device == device:
        return batch
    return Rollout(
        batch.prompt_ids.to(device), batch.prompt_mask.to(device), batch.completion_ids.to(device), batch.completion_mask.to(device),
        batch.sampler_logprobs.to(device), batch.texts, batch.ended.to(device) if batch.ended is not None else None,
    )


def bind_rewards(spec: dict[str, Any], work_dir: Path, library_rewards: dict[str, RewardFunction], events: EventWriter) -> dict[str, Any]:
    """Each reward of the spec, ready to score: library functions in-process, Python code in its sandboxed
    worker (which can read the run folder), builtins as they are."""
    rewards: dict[str, Any] = {
        r["name"]: bind_in_process(library_rewards[r["name"]], r)
        if r["name"] in library_rewards
        else bind_python_reward(r, work_dir, spec.get("sandbox")) if r["source"]["kind"] == "python" else bind_reward(r)
        for r in spec["rewards"]
    }
    for reward in rewards.values():
        if isinstance(reward, PythonReward):
            reward.report = lambda message: events.log("error", message)
    return rewards


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
    trainer, group_size = spec["trainer"], spec["algorithm"]["groupSize"]
    total_steps = trainer["steps"]

    # ------------------------------------------------------------------ setup
    seed_everything(spec["seed"])
    set_cpu_threads(trainer["cpuThreads"])
    device = resolve_device(trainer["device"], ctx.local_rank)
    events.log(
        "info",
        f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} CPU threads, seed {spec['seed']}"
        + (f", {ctx.world_size} ranks" if ctx.distributed else ""),
    )
    liger_cls = resolve_liger(device)  # None on CPU or without liger-kernel: the torch loss path
    if liger_cls is not None:
        events.log("info", "policy loss: Liger fused linear GRPO loss where the loss type maps onto it")

    environments: list[Any] = build_run_environments(spec, work_dir, rewards)
    for env in environments:
        if isinstance(env, ActingEnvironment) and closing is not None:
            closing.callback(env.impl.close)
    for env in environments:
        for note in env.notes:
            events.log("warning", note)

    actors, api_actors = build_actors(spec, work_dir, device, ctx, events.log)
    attach_engines(spec, actors, work_dir, ctx.distributed, events.log)  # vLLM actors sample with their own engine
    if closing is not None:
        closing.callback(close_engines, actors)
    residency = build_residency(spec, actors, events)
    # The PPO family's critics (learners/ppo.py): one per actor (ppo, ippo) or per environment (mappo).
    critics = ppo.build_critics(spec, actors, environments, ctx, work_dir, events.log) if family(spec["algorithm"]["name"]) == "ppo" else None
    if critics is not None:
        ppo.register(critics, residency)
    # Judges: rewards with an `actors` parameter may ask the run's frozen actors to generate.
    judges: dict[str, Any] = {n: ApiActorHandle(n, a) for n, a in api_actors.items()}
    judges.update({n: EngineActorHandle(n, engine_of(a), a.loaded.tokenizer, a.spec["sampling"]) for n, a in actors.items() if not a.trainable})
    for reward in rewards.values():
        if isinstance(reward, InProcessReward):
            reward.actors = judges
    # Acting environments may generate from any actor of the run (what is said through a handle is not trained on).
    handles = {**judges, **{n: EngineActorHandle(n, engine_of(a), a.loaded.tokenizer, a.spec["sampling"]) for n, a in actors.items() if a.trainable}}
    for env in environments:
        if isinstance(env, ActingEnvironment):
            env.bind(handles, events.log)
    unused = [name for name in [*actors, *api_actors] if not any(name in env.spec["actors"] for env in environments)]
    if unused:
        events.log("warning", f"actors in no environment (never trained): {', '.join(unused)}")
    # Eval-only environments draw no training prompts (evaluation.py evaluates them).
    prompts_per_env = allocate_prompts(trainer["promptsPerStep"], [0.0 if env.spec.get("evalOnly") else env.spec["weight"] for env in environments])
    events.log(
        "info",
        f"{total_steps} steps x {trainer['promptsPerStep']} prompts x {group_size} samples; "
        + ", ".join(f'"{env.name}": {n} prompts/step' for env, n in zip(environments, prompts_per_env)),
    )
    first_step = 1
    if resume_from is not None:
        # After every model, optimizer and sampler exists (setup drew from the RNGs): overwrite them all.
        done, warnings = load_training_checkpoint(resume_from, spec, actors, environments, device)
        for warning in warnings:
            events.log("warning", warning)
        if critics is not None:
            ppo.load_critics(resume_from, critics)
        events.log("info", f"resumed from {resume_from} (step {done} of {total_steps}): next step {done + 1}")
        first_step = done + 1
    report_memory(events, first_step - 1, "setup", device)
    # algorithm.async: a producer process (async_process.py) or thread (async_rollout.py) samples the next
    # batches while this one trains.
    producer: RolloutProducer | ProcessRolloutProducer | None = None
    if spec["algorithm"].get("async") is not None and first_step <= total_steps:
        queued, producer_state = load_in_flight(resume_from, environments) if resume_from else ([], None)
        why_thread = process_producer_ok(spec, actors, rewards, device)
        if why_thread is None:
            producer = ProcessRolloutProducer(spec, environments, prompts_per_env, actors, device, first_step, work_dir, events.log, queued, producer_state)
            events.log("info", f"asynchronous rollouts: a producer process (pid {producer.pid}) samples up to {spec['algorithm']['async']['maxStaleness']} updates behind the trainer")
        else:
            producer = RolloutProducer(spec, environments, prompts_per_env, actors, device, first_step, queued)
            events.log("info", f"asynchronous rollouts: a producer thread ({why_thread})")
        if closing is not None:
            closing.callback(producer.close)  # also when the loop raises (close is idempotent)

    def finish(state: str, message: str, steps: int) -> tuple[str, str, int]:
        if producer is not None:
            producer.close()
        return state, message, steps

    def save(step: int) -> None:
        # With async rollouts: once the producer is idle (the RNG state is then after every batch it made), with those batches.
        with producer.quiesce() if producer is not None else contextlib.nullcontext():
            folder, saved = save_training_checkpoint(checkpoints_root(work_dir), step, spec, actors, environments, ctx)
            if critics is not None:
                ppo.save_critics(folder, critics, ctx)
            if producer is not None and ctx.is_main:
                producer.save_in_flight(folder)
        if not ctx.is_main:
            return
        for part in saved:
            events.checkpoint(step=step, path=str(part.path), actor=part.actor, size_bytes=part.size_bytes)
        keep = trainer["keepCheckpoints"]
        for removed in prune_checkpoints(checkpoints_root(work_dir), keep):
            events.log("info", f"removed checkpoint {removed.path.name} (trainer.keepCheckpoints={keep})")
            events.checkpoint_pruned(step=removed.step, path=str(removed.path), keep_checkpoints=keep)
        report_memory(events, step, "checkpoint", device)

    last_step_seconds, paused_seconds, last_saved = 0.0, 0.0, first_step - 1 if resume_from is not None else -1
    offline = OfflineLearner(spec, environments, actors, prompts_per_env, ctx, residency) if family(spec["algorithm"]["name"]) == "offline" else None

    def over_limit(pausing: float) -> str | None:
        limit = trainer.get("maxDurationSeconds")
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
        evaluate(events, step, environments, actors, device, api_actors=api_actors, seed=spec["seed"])
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

        # -------------------------------------------------------------- offline learners (sft, dpo)
        if offline is not None:
            # No rollout: each actor trains on its environments' next dataset rows (learners/offline_loop.py).
            for name, values in offline.step(step).items():
                events.metric(step, {**values, "step_time_s": time.monotonic() - step_started}, actor=name)
            last_step_seconds = time.monotonic() - step_started
            if trainer["evalEvery"] > 0 and (step % trainer["evalEvery"] == 0 or step == total_steps):
                for name, values in offline.evaluate().items():
                    events.metric(step, values, actor=name)
                if any(env.spec["rewards"] for env in environments):  # listed rewards are evaluated, not trained on
                    run_eval(step)
            if trainer["checkpointEvery"] > 0 and (step % trainer["checkpointEvery"] == 0 or step == total_steps):
                save(step)
                last_saved = step
            continue

        # -------------------------------------------------------------- rollout
        # Each environment draws its prompts and its actor samples groupSize completions per prompt
        # (with async rollouts the producer did this and the reward phase: `produced`).
        produced = producer.take(step) if producer is not None else None
        parts: dict[str, list[EnvRollout]] = defaultdict(list)
        conversations: list[ConversationPart] = []
        rollout_seconds: dict[str, float] = defaultdict(float)
        samplers = [a for env, n in zip(environments, prompts_per_env) if n > 0 for a in env.spec["actors"] if a in actors]
        residency.for_rollout(samplers)
        # A vLLM actor's engine gets its trainer's weights (wake weights -> push -> reset prefix cache -> wake KV
        # cache), then samples from its own copy: the trainer's weights may go back to the host meanwhile.
        for name, synced in wake_for_rollout(actors).items():
            if step == first_step:
                events.log("info", f'actor "{name}": {synced.tensors} tensors ({synced.bytes / 2**20:.1f} MiB) pushed to its vLLM engine in {synced.seconds:.2f}s')
        residency.for_rollout(a for a in samplers if actors[a].engine is None)
        gathered = contextlib.ExitStack()  # sharded actors hold full parameters while they sample
        for actor in actors.values():
            if actor.backend is not None and actor.engine is None:
                gathered.enter_context(actor.backend.sampling())
        for env, n_prompts in zip(environments, prompts_per_env):
            if n_prompts == 0 or produced is not None:
                continue
            if isinstance(env, CollaborativeEnvironment):
                row_indices = env.sampler.take(n_prompts)
                tokenizers = {a: actors[a].loaded.tokenizer if a in actors else None for a in env.actors}
                episodes = []
                for g, r in enumerate(row_indices):
                    for s in range(group_size):
                        turns = dsl_sample(env.node, schedule_seed(spec["seed"], env.name, step, g, s), env.actors, env.spec["maxTurns"]) if env.node is not None else []
                        episodes.append(env.new_episode(env.dataset.rows[r], r, g, s, turns, tokenizers))
                seconds = (env.play if isinstance(env, ActingEnvironment) else run_turns)(
                    episodes,
                    {a: engine_of(actors[a]) if a in actors else api_actors[a] for a in env.actors},
                    tokenizers,
                    {a: actors[a].spec["sampling"] if a in actors else api_actors[a].sampling for a in env.actors},
                    device,
                )
                for a, sec in seconds.items():
                    rollout_seconds[a] += sec
                conversations.append(ConversationPart(env, row_indices, episodes))
                continue
            t0 = time.monotonic()
            parts[env.actor].append(draw_single_turn(env, actors[env.actor], n_prompts, group_size, device))
            rollout_seconds[env.actor] += time.monotonic() - t0
        gathered.close()
        if produced is not None:
            parts, rollout_seconds = produced.parts, produced.rollout_seconds
        report_memory(events, step, "rollout", device)

        # -------------------------------------------------------------- reward
        overlong = spec["algorithm"]["overlong"]
        for name, env_parts in parts.items() if produced is None else ():
            for part in env_parts:
                score_single_turn(part, group_size, overlong, int(actors[name].spec["sampling"]["maxNewTokens"]))
        for conv in conversations:
            conv.env.score_all(conv.episodes)
        # DAPO dynamic sampling: groups with equal rewards are replaced by freshly drawn prompts.
        resampling: dict[str, dict[str, float]] = {}
        dynamic = spec["algorithm"]["dynamicSampling"]
        if dynamic["enabled"] and produced is None:
            for name, env_parts in parts.items():
                counts: dict[str, float] = defaultdict(float)
                for k, part in enumerate(env_parts):
                    env_parts[k], part_counts = refill_groups(part, actors[name], group_size, int(dynamic["maxRounds"]), overlong, device)
                    for key, value in part_counts.items():
                        counts[key] += value
                rollout_seconds[name] += counts.pop("seconds", 0.0)
                resampling[name] = {f"dynamic_sampling/{key}": value for key, value in counts.items()}
        resampling = produced.resampling if produced is not None else resampling
        report_memory(events, step, "reward", device)
        sleep_for_training(actors)  # colocated engines free their memory while the actors train (after dynamic sampling's draws)

        # -------------------------------------------------------------- update
        # Per actor: advantages within each group, then iterationsPerBatch clipped PG steps.
        updates: dict[str, dict[str, float]] = {}
        shares_of: dict[str, list[Share]] = {}
        fits: dict[str, list[ppo.CriticBatch]] = defaultdict(list)  # what each critic fits after the actors' updates
        if critics is not None and critics.settings.centralised:
            residency.for_rollout(c.name for c in critics.all())
            ppo.prepare_central(critics, conversations, lambda episode, actor: episode.rewards[actor])
            critics.central = ctx.broadcast_object(critics.central)  # every rank fits and trains on rank 0's
        for name, actor in actors.items():
            if not actor.trainable:
                continue
            shares = actor_shares(name, actor, parts[name], conversations, device, overlong["mode"])
            if not shares:
                continue
            training = actor.spec["training"]
            rewards_t = torch.tensor([r for sh in shares for r in sh.rewards], dtype=torch.float32)
            if critics is None:
                advantages = group_advantages(rewards_t, group_size, training["advantageNorm"])
                store_advantages(shares, advantages.tolist())
            # An actor with no token to train on this step (a round spec may skip it) is not updated.
            if sum(int(sh.loss_mask.sum()) for sh in shares) == 0:
                truncated = sum(sh.truncation[0] for sh in shares)
                if overlong["mode"] == "filter" and truncated:
                    # Every completion was cut off and filtered: report it rather than go silent.
                    events.log("warning", f'step {step}: every completion of "{name}" hit maxNewTokens and was filtered (algorithm.overlong.mode "filter"); not updated')
                    shares_of[name] = shares
                    updates[name] = {"truncation_rate": truncated / max(sum(sh.truncation[1] for sh in shares), 1), **resampling.get(name, {})}
                continue
            shares_of[name] = shares
            pad = actor.loaded.tokenizer.pad_token_id
            batch = concat_rollouts([sh.rollout for sh in shares], pad)
            width = batch.completion_ids.shape[1]
            mask = torch.cat([_pad_to(sh.loss_mask, width, 0, left=False) for sh in shares])
            if critics is not None:
                advantages = rewards_t  # PPO family: replaced below by per-token advantages of rank 0's batch
            # Every rank trains on rank 0's batch, whatever its own sampling kernels drew.
            batch, mask, advantages = ctx.broadcast_object((batch, mask, advantages))
            batch, mask, advantages = to_device(batch, actor.device), mask.to(actor.device), advantages.to(actor.device)
            if critics is not None:
                # PPO family: per-token advantages from GAE over the critic's values (learners/ppo.py); every
                # rank runs the critic on the same batch (a sharded critic's forward is collective).
                residency.for_update(name, also=ppo.critic_of(critics, name, conversations))
                targets = ppo.targets(critics, name, batch, mask, advantages.tolist(), conversations)
                advantages = targets.advantages
                store_advantages(shares, targets.row_advantages)
                if targets.critic_batch is not None:
                    fits[critics.by_actor[name].name].append(targets.critic_batch)
                updates[name] = {"returns/mean": targets.returns_mean}
                if math.isfinite(targets.explained_variance):  # undefined while every return is equal
                    updates[name]["value/explained_variance"] = targets.explained_variance
            residency.for_update(name, also=[reference_name(name)] if actor.reference is not None else [])

            lr = lr_at(step, training["learningRate"], training["scheduler"]["type"], training["scheduler"]["warmupSteps"], total_steps)
            assert actor.backend is not None
            actor.backend.set_lr(lr)
            iterations = training["iterationsPerBatch"]
            loss_options = LossOptions(
                loss_type=actor.loss_type,
                clip_eps_low=training["clipEpsLow"],
                clip_eps_high=training["clipEpsHigh"],
                max_completion_len=max(sh.max_len for sh in shares),
                kl_beta=training["klBeta"],
                temperature=actor.temperature,
                tis_cap=tis_cap_of(spec["algorithm"]),
                entropy_coef=entropy_coef_of(spec["algorithm"]),
            )
            # Per micro-batch of this rank's rows: optimizer steps whose gradients are the whole batch's (update.py).
            result = update_actor(
                actor.backend, batch, mask, advantages, loss_options, iterations, training["maxGradNorm"], ctx,
                trainer.get("microBatchSize"), reference_logprobs(actor), liger_cls,
                # The KL reference's own peak, before the update's (both were booked as "reference" before).
                after_reference=(lambda: report_memory(events, step, "reference", device, actor=name)) if training["klBeta"] > 0 else None,
            )
            residency.observe("update")
            generated_tokens = float(mask.sum())
            lengths = mask.sum(dim=1).float()
            truncated, completions = (sum(sh.truncation[i] for sh in shares) for i in (0, 1))
            trained_advantages = advantages[mask > 0] if advantages.dim() == 2 else advantages  # PPO: per token
            updates[name] = {
                **updates.get(name, {}),
                **result,
                "lr": lr,
                "completion_len": generated_tokens / mask.shape[0],
                "completion_len/min": float(lengths.min()),
                "completion_len/max": float(lengths.max()),
                "truncation_rate": truncated / max(completions, 1),
                "advantage/mean": float(trained_advantages.mean()),
                "advantage/std": float(trained_advantages.std(correction=0)),
                "advantage/min": float(trained_advantages.min()),
                "advantage/max": float(trained_advantages.max()),
                "tokens_per_s": generated_tokens / max(rollout_seconds[name], 1e-9),
                **resampling.get(name, {}),
                **(produced.staleness() if produced is not None else {}),
            }
            report_memory(events, step, "update", device, actor=name)

        if critics is not None:
            # The critics fit the returns once every actor has used their values (value/loss per actor).
            for name, stats in ppo.fit_critics(critics, fits, residency, spec, actors, ctx).items():
                if name in updates:
                    updates[name].update(stats)

        # -------------------------------------------------------------- report
        last_step_seconds = time.monotonic() - step_started
        for name, update in updates.items():
            shares = shares_of[name]
            all_rewards = torch.tensor([r for sh in shares for r in sh.rewards])
            values = {"reward/mean": float(all_rewards.mean()), "reward/std": float(all_rewards.std(correction=0))}
            for reward_name in sorted({n for sh in shares for c in sh.components for n in c}):
                per_sample = [c[reward_name] for sh in shares for c in sh.components if reward_name in c]
                values[f"reward/{reward_name}"] = float(np.mean(per_sample))
                values[f"reward/{reward_name}/std"] = float(np.std(per_sample))
            values.update(update)
            values.update(environment_metrics(conversations, name))  # e.g. tools/calls (acting environments)
            values["step_time_s"] = last_step_seconds
            events.metric(step, values, actor=name)
        trained_names = {name for name, a in actors.items() if a.trainable}
        emit_episodes(events, step, [p for env_parts in parts.values() for p in env_parts], conversations, trained_names, group_size, trainer["episodesPerStep"])

        # -------------------------------------------------------------- eval
        if trainer["evalEvery"] > 0 and (step % trainer["evalEvery"] == 0 or step == total_steps):
            with producer.quiesce() if producer is not None else contextlib.nullcontext():  # eval draws from the shared RNG
                run_eval(step)

        # -------------------------------------------------------------- checkpoint
        every = trainer["checkpointEvery"]
        if every > 0 and (step % every == 0 or step == total_steps):
            save(step)
            last_saved = step
        if producer is not None:
            producer.publish(step)  # the weights after this update, for the batch that will be sampled with them

    return finish("succeeded", f"finished {total_steps} steps", total_steps)
