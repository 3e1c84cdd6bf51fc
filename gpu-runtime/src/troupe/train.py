"""The training loop, top to bottom: set up, then each step roll out -> score -> update -> report.

Everything a step does is in `train` below, in the order it happens; the math lives in pure
functions (`grpo.py`, `lr_schedule.py`), sampling in `rollout.py`, log-probs in `policy.py`, a
single-turn environment's rollout and scoring in `single_turn.py`, what each actor trains on in
`training_shares.py`, held-out evaluation in `evaluation.py`.
"""

from __future__ import annotations

import copy
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from .schedule import sample as dsl_sample
from .collaborative import MULTI_ACTOR_KINDS, CollaborativeEnvironment, build_collaborative, run_turns, schedule_seed
from .data import Dataset, load_dataset
from .environments import allocate_prompts, build_environment
from .events import EventWriter
from .grpo import effective_loss_type, group_advantages, masked_mean
from .models import LoadedModel, load_actor_model
from .policy import completion_logprobs
from .update_loss import LossOptions, resolve_liger, update_loss
from .api_actor import ApiActor, build_api_actor
from .python_rewards import PythonReward, bind_python_reward
from .shared_lora import FIRST_ADAPTER, AdapterBound, add_adapter, base_key
from .reward_api import ApiActorHandle, HFActorHandle, InProcessReward, RewardFunction, bind_in_process
from .rewards import bind_reward
from .rollout import _pad_to, concat_rollouts
from .lr_schedule import lr_at
from .lora import adapters_disabled, apply_lora, has_lora
from .checkpointing import checkpoints_root, load_training_checkpoint, prune_checkpoints, save_training_checkpoint
from .control import RunControl
from .transcripts import emit_episodes
from .system import memory_readings, resolve_device, seed_everything, set_cpu_threads
from .evaluation import evaluate
from .single_turn import EnvRollout, draw_single_turn, refill_groups, score_single_turn
from .training_shares import ConversationPart, Share, actor_shares


class StopSignal(Protocol):
    """Anything with `is_set()` (a threading.Event works); `reason` is reported when present."""

    def is_set(self) -> bool: ...


@dataclass
class Actor:
    index: int
    spec: dict[str, Any]
    loaded: LoadedModel
    optimizer: torch.optim.Optimizer | None  # None for a frozen actor: it samples, it is never updated
    reference: torch.nn.Module | None
    loss_type: str

    @property
    def name(self) -> str:
        return self.spec["name"]

    @property
    def temperature(self) -> float:
        return float(self.spec["sampling"]["temperature"])

    @property
    def trainable(self) -> bool:
        return bool(self.spec["trainable"])


def make_optimizer(model: torch.nn.Module, training: dict[str, Any]) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if training["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=training["learningRate"], weight_decay=training["weightDecay"])
    beta1, beta2 = training["betas"]
    # The fused kernel does the whole update in one pass per tensor instead of a Python loop of
    # foreach ops: measured 2.6x faster optimizer steps on CPU (bench/runtime/trl_compare.py), and
    # it is TRL's default too. It needs floating tensors on CPU or CUDA, which is all we train.
    fused = all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params)
    return torch.optim.AdamW(
        params, lr=training["learningRate"], betas=(beta1, beta2), weight_decay=training["weightDecay"], fused=fused
    )


def report_memory(events: EventWriter, step: int, phase: str, device: torch.device, actor: str | None = None) -> None:
    for reading in memory_readings(device):
        events.memory(step=step, phase=phase, actor=actor, **reading)  # type: ignore[arg-type]
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)  # so the next phase's peak is its own


def train(
    spec: dict[str, Any],
    events: EventWriter,
    work_dir: Path,
    stop: StopSignal | None = None,
    control: RunControl | None = None,
    resume_from: Path | None = None,
    library_rewards: dict[str, RewardFunction] | None = None,
) -> tuple[str, str, int]:
    """Run a validated, supported spec. Returns (final state, message, steps completed).

    `stop` (SIGTERM/SIGINT) cancels between steps; `control` pauses, resumes or stops after a
    step with a checkpoint; `resume_from` continues from a checkpoint folder (see checkpointing.py).
    """
    started = time.monotonic()
    trainer, group_size = spec["trainer"], spec["algorithm"]["groupSize"]
    total_steps = trainer["steps"]

    # ------------------------------------------------------------------ setup
    seed_everything(spec["seed"])
    set_cpu_threads(trainer["cpuThreads"])
    device = resolve_device(trainer["device"])
    events.log("info", f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} CPU threads, seed {spec['seed']}")
    liger_cls = resolve_liger(device)  # None on CPU or without liger-kernel: the torch loss path
    if liger_cls is not None:
        events.log("info", "policy loss: Liger fused linear GRPO loss where the loss type maps onto it")

    datasets: dict[str, Dataset] = {d["name"]: load_dataset(d, i, spec["seed"], work_dir) for i, d in enumerate(spec["datasets"])}
    library_rewards = library_rewards or {}
    rewards: dict[str, Any] = {
        r["name"]: bind_in_process(library_rewards[r["name"]], r)
        if r["name"] in library_rewards
        else bind_python_reward(r) if r["source"]["kind"] == "python" else bind_reward(r)
        for r in spec["rewards"]
    }
    for reward in rewards.values():
        if isinstance(reward, PythonReward):
            reward.report = lambda message: events.log("error", message)
    row_rng = np.random.default_rng(spec["seed"])
    environments: list[Any] = [
        build_collaborative(e, i, datasets, rewards, row_rng) if e["kind"] in MULTI_ACTOR_KINDS else build_environment(e, i, datasets, rewards, row_rng)
        for i, e in enumerate(spec["environments"])
    ]
    for env in environments:
        for note in env.notes:
            events.log("warning", note)

    actors: dict[str, Actor] = {}
    shared_bases: dict[str, str] = {}  # base_key -> the LoRA actor that loaded that base
    api_actors: dict[str, ApiActor] = {}
    for i, actor_spec in enumerate(spec["actors"]):
        if actor_spec["backend"] == "openai":
            api_actors[actor_spec["name"]] = build_api_actor(actor_spec, i)
            events.log("info", f'actor "{actor_spec["name"]}": {actor_spec["api"]["model"]} at {actor_spec["api"]["baseUrl"]} (OpenAI-compatible API, frozen)')
            continue
        training = actor_spec["training"]
        loss_type = effective_loss_type(spec["algorithm"]["name"], training["lossType"])
        key = base_key(actor_spec)
        if key is not None and key in shared_bases:
            # Same base as an earlier LoRA actor: add this actor's adapter to it (shared_lora.py).
            owner = actors[shared_bases[key]]
            if not isinstance(owner.loaded.model, AdapterBound):
                raw = owner.loaded.model
                owner.loaded = LoadedModel(AdapterBound(raw, FIRST_ADAPTER, raw._troupe_lora_config), owner.loaded.tokenizer, owner.loaded.description)
            raw = object.__getattribute__(owner.loaded.model, "_shared")
            n = add_adapter(raw, training["lora"], actor_spec["name"])
            bound = AdapterBound(raw, actor_spec["name"], raw._troupe_lora_configs[actor_spec["name"]])
            loaded = LoadedModel(bound, owner.loaded.tokenizer, f"{owner.loaded.description}, base shared with \"{owner.name}\"")  # type: ignore[arg-type]
            actors[actor_spec["name"]] = Actor(i, actor_spec, loaded, make_optimizer(bound, training), None, loss_type)  # type: ignore[arg-type]
            events.log(
                "info",
                f'actor "{actor_spec["name"]}": LoRA adapter rank {training["lora"]["rank"]} ({n:,} trainable) on the base of "{owner.name}" '
                f"(one copy in memory), loss {loss_type}, optimizer {training['optimizer']}",
            )
            continue
        loaded = load_actor_model(actor_spec, i, work_dir)
        loaded.model.to(device)
        if not actor_spec["trainable"]:
            loaded.model.eval().requires_grad_(False)
            actors[actor_spec["name"]] = Actor(i, actor_spec, loaded, None, None, loss_type)
            events.log("info", f'actor "{actor_spec["name"]}": {loaded.description}, {loaded.num_params:,} parameters, frozen (no optimizer)')
            continue
        lora_note = ""
        if "lora" in training:
            n = apply_lora(loaded.model, training["lora"], i)
            lora_note = f', LoRA rank {training["lora"]["rank"]} on {", ".join(training["lora"]["targetModules"])} ({n:,} trainable)'
        reference = None
        if training["klBeta"] > 0 and not has_lora(loaded.model):
            reference = copy.deepcopy(loaded.model).eval().requires_grad_(False)
        actors[actor_spec["name"]] = Actor(i, actor_spec, loaded, make_optimizer(loaded.model, training), reference, loss_type)
        if key is not None:
            shared_bases[key] = actor_spec["name"]
        events.log(
            "info",
            f'actor "{actor_spec["name"]}": {loaded.description}, {loaded.num_params:,} parameters, '
            f'vocabulary {loaded.tokenizer.vocab_size}, loss {loss_type}, optimizer {training["optimizer"]}{lora_note}',
        )
    # Judges: rewards with an `actors` parameter may ask the run's frozen actors to generate.
    judges: dict[str, Any] = {n: ApiActorHandle(n, a) for n, a in api_actors.items()}
    judges.update({n: HFActorHandle(n, a.loaded.model, a.loaded.tokenizer, a.spec["sampling"], device) for n, a in actors.items() if not a.trainable})
    for reward in rewards.values():
        if isinstance(reward, InProcessReward):
            reward.actors = judges
    unused = [name for name in [*actors, *api_actors] if not any(name in env.spec["actors"] for env in environments)]
    if unused:
        events.log("warning", f"actors in no environment (never trained): {', '.join(unused)}")
    prompts_per_env = allocate_prompts(trainer["promptsPerStep"], [env.spec["weight"] for env in environments])
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
        events.log("info", f"resumed from {resume_from} (step {done} of {total_steps}): next step {done + 1}")
        first_step = done + 1
    report_memory(events, first_step - 1, "setup", device)

    def save(step: int) -> None:
        folder, saved = save_training_checkpoint(checkpoints_root(work_dir), step, spec, actors, environments)
        for part in saved:
            events.checkpoint(step=step, path=str(part.path), actor=part.actor, size_bytes=part.size_bytes)
        keep = trainer["keepCheckpoints"]
        for removed in prune_checkpoints(checkpoints_root(work_dir), keep):
            events.log("info", f"removed checkpoint {removed.path.name} (trainer.keepCheckpoints={keep})")
            events.checkpoint_pruned(step=removed.step, path=str(removed.path), keep_checkpoints=keep)
        report_memory(events, step, "checkpoint", device)

    cancelled = (lambda: stop.is_set()) if stop is not None else (lambda: False)
    last_step_seconds, paused_seconds, last_saved = 0.0, 0.0, first_step - 1 if resume_from is not None else -1
    for step in range(first_step, total_steps + 1):
        # ---------------------------------------------------------- step boundary: controls
        if control is not None:
            for problem in control.take_rejected():
                events.log("warning", problem)
            if control.paused and not control.stop_requested and not cancelled():
                events.status("paused", f"paused after step {step - 1} of {total_steps}")
                pause_began = time.monotonic()
                control.wait_while_paused(cancelled)
                paused_seconds += time.monotonic() - pause_began  # a pause does not count against maxDurationSeconds
                if not cancelled() and not control.stop_requested:
                    events.status("running", f"resumed at step {step} of {total_steps}")
            if control.stop_requested and not cancelled():
                if last_saved != step - 1:
                    save(step - 1)
                return "stopped", f"stopped after step {step - 1} of {total_steps} on request; checkpoint step-{step - 1} saved", step - 1
        if stop is not None and stop.is_set():
            reason = getattr(stop, "reason", None) or "a stop request"
            return "cancelled", f"cancelled by {reason} after step {step - 1} of {total_steps}", step - 1
        limit = trainer.get("maxDurationSeconds")
        elapsed = time.monotonic() - started - paused_seconds
        if limit and step > 1 and elapsed + last_step_seconds > limit:
            message = (
                f"stopped after step {step - 1} of {total_steps}: maxDurationSeconds={limit} would be exceeded "
                f"({elapsed:.1f}s elapsed, last step took {last_step_seconds:.1f}s)"
            )
            events.log("info", message)
            return "succeeded", message, step - 1
        step_started = time.monotonic()

        # -------------------------------------------------------------- rollout
        # Each environment draws its prompts and its actor samples groupSize completions per prompt.
        parts: dict[str, list[EnvRollout]] = defaultdict(list)
        conversations: list[ConversationPart] = []
        rollout_seconds: dict[str, float] = defaultdict(float)
        for env, n_prompts in zip(environments, prompts_per_env):
            if n_prompts == 0:
                continue
            if isinstance(env, CollaborativeEnvironment):
                row_indices = env.sampler.take(n_prompts)
                tokenizers = {a: actors[a].loaded.tokenizer if a in actors else None for a in env.actors}
                episodes = []
                for g, r in enumerate(row_indices):
                    for s in range(group_size):
                        turns = dsl_sample(env.node, schedule_seed(spec["seed"], env.name, step, g, s), env.actors, env.spec["maxTurns"])
                        episodes.append(env.new_episode(env.dataset.rows[r], r, g, s, turns, tokenizers))
                seconds = run_turns(
                    episodes,
                    {a: actors[a].loaded.model if a in actors else api_actors[a] for a in env.actors},
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
        report_memory(events, step, "rollout", device)

        # -------------------------------------------------------------- reward
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
        report_memory(events, step, "reward", device)

        # -------------------------------------------------------------- update
        # Per actor: advantages within each group, then iterationsPerBatch clipped PG steps.
        updates: dict[str, dict[str, float]] = {}
        shares_of: dict[str, list[Share]] = {}
        for name, actor in actors.items():
            if not actor.trainable:
                continue
            shares = actor_shares(name, actor, parts[name], conversations, device, overlong["mode"])
            if not shares:
                continue
            training = actor.spec["training"]
            rewards_t = torch.tensor([r for sh in shares for r in sh.rewards], dtype=torch.float32)
            advantages = group_advantages(rewards_t, group_size, training["advantageNorm"])
            offset = 0
            for sh in shares:
                sh.set_advantages(advantages[offset : offset + len(sh.rewards)].tolist())
                offset += len(sh.rewards)
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
            model = actor.loaded.model
            pad = actor.loaded.tokenizer.pad_token_id
            batch = concat_rollouts([sh.rollout for sh in shares], pad)
            width = batch.completion_ids.shape[1]
            mask = torch.cat([_pad_to(sh.loss_mask, width, 0, left=False) for sh in shares])
            advantages = advantages.to(device)

            ref_logp = None
            if training["klBeta"] > 0:
                with torch.no_grad():
                    if actor.reference is not None:
                        ref_logp, _ = completion_logprobs(actor.reference, batch, actor.temperature)
                    else:  # LoRA: the reference is the base model, adapters off
                        was_training = model.training
                        model.eval()
                        with adapters_disabled(model):
                            ref_logp, _ = completion_logprobs(model, batch, actor.temperature)
                        model.train(was_training)
                report_memory(events, step, "reference", device, actor=name)

            lr = lr_at(step, training["learningRate"], training["scheduler"]["type"], training["scheduler"]["warmupSteps"], total_steps)
            for group in actor.optimizer.param_groups:
                group["lr"] = lr
            model.train()
            sums: dict[str, float] = defaultdict(float)
            iterations = training["iterationsPerBatch"]
            loss_options = LossOptions(
                loss_type=actor.loss_type,
                clip_eps_low=training["clipEpsLow"],
                clip_eps_high=training["clipEpsHigh"],
                max_completion_len=max(sh.max_len for sh in shares),
                kl_beta=training["klBeta"],
                temperature=actor.temperature,
            )
            old_logp: torch.Tensor | None = None
            for iteration in range(iterations):
                # Liger's fused loss on CUDA when installed and the options map onto it, else the
                # token-log-prob kernel + policy_loss; neither materialises [B, T, vocab] logits.
                loss, stats, logp, entropy = update_loss(
                    model, batch, mask, advantages, old_logp, ref_logp, loss_options,
                    with_entropy=iteration == 0, liger_cls=liger_cls,
                )
                if iteration == 0:
                    # The batch's log-probs before any update: the ratio's denominator for every iteration.
                    assert logp is not None
                    old_logp = logp
                    first = {
                        "logprob_gap": float(masked_mean((batch.sampler_logprobs - old_logp).abs(), mask)),
                        "entropy": float(masked_mean(entropy, mask)) if entropy is not None else float("nan"),
                    }
                assert actor.optimizer is not None
                actor.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), training["maxGradNorm"])
                actor.optimizer.step()
                sums["loss"] += float(loss.detach())
                sums["grad_norm"] += float(grad_norm)
                for key, value in stats.items():
                    sums[key] += value
            generated_tokens = float(mask.sum())
            lengths = mask.sum(dim=1).float()
            truncated, completions = (sum(sh.truncation[i] for sh in shares) for i in (0, 1))
            updates[name] = {
                **{key: value / iterations for key, value in sums.items()},
                **first,
                "lr": lr,
                "completion_len": generated_tokens / mask.shape[0],
                "completion_len/min": float(lengths.min()),
                "completion_len/max": float(lengths.max()),
                "truncation_rate": truncated / max(completions, 1),
                "advantage/mean": float(advantages.mean()),
                "advantage/std": float(advantages.std(correction=0)),
                "advantage/min": float(advantages.min()),
                "advantage/max": float(advantages.max()),
                "tokens_per_s": generated_tokens / max(rollout_seconds[name], 1e-9),
                **resampling.get(name, {}),
            }
            report_memory(events, step, "update", device, actor=name)

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
            values["step_time_s"] = last_step_seconds
            events.metric(step, values, actor=name)
        trained_names = {name for name, a in actors.items() if a.trainable}
        emit_episodes(events, step, [p for env_parts in parts.values() for p in env_parts], conversations, trained_names, group_size, trainer["episodesPerStep"])

        # -------------------------------------------------------------- eval
        if trainer["evalEvery"] > 0 and (step % trainer["evalEvery"] == 0 or step == total_steps):
            evaluate(events, step, environments, actors, device)

        # -------------------------------------------------------------- checkpoint
        every = trainer["checkpointEvery"]
        if every > 0 and (step % every == 0 or step == total_steps):
            save(step)
            last_saved = step

    return "succeeded", f"finished {total_steps} steps", total_steps
