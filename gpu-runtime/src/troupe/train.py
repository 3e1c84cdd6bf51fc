"""The training loop, top to bottom: set up, then each step roll out -> score -> update -> report.

Everything a step does is in `train` below, in the order it happens; the math lives in pure
functions (`grpo.py`, `lr_schedule.py`), sampling in `rollout.py`, log-probs in `policy.py`.
"""

from __future__ import annotations

import copy
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from .data import Dataset, load_dataset
from .environments import RenderedPrompt, SingleTurnEnvironment, allocate_prompts, build_environment
from .events import EventWriter
from .grpo import effective_loss_type, group_advantages, masked_mean, policy_loss
from .models import LoadedModel, load_actor_model, save_checkpoint
from .policy import completion_logprobs
from .rewards import bind_reward
from .rollout import Rollout, concat_rollouts, sample
from .lr_schedule import lr_at
from .system import memory_readings, resolve_device, seed_everything, set_cpu_threads


class StopSignal(Protocol):
    """Anything with `is_set()` (a threading.Event works); `reason` is reported when present."""

    def is_set(self) -> bool: ...


@dataclass
class Actor:
    index: int
    spec: dict[str, Any]
    loaded: LoadedModel
    optimizer: torch.optim.Optimizer
    reference: torch.nn.Module | None
    loss_type: str

    @property
    def name(self) -> str:
        return self.spec["name"]

    @property
    def temperature(self) -> float:
        return float(self.spec["sampling"]["temperature"])


@dataclass
class EnvRollout:
    """One environment's share of a step: G completions for each of its prompts (groups contiguous)."""

    env: SingleTurnEnvironment
    row_indices: list[int]
    prompts: list[RenderedPrompt]
    rollout: Rollout
    rewards: list[float] = field(default_factory=list)
    components: list[dict[str, float]] = field(default_factory=list)
    advantages: list[float] = field(default_factory=list)


def make_optimizer(model: torch.nn.Module, training: dict[str, Any]) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if training["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=training["learningRate"], weight_decay=training["weightDecay"])
    beta1, beta2 = training["betas"]
    return torch.optim.AdamW(params, lr=training["learningRate"], betas=(beta1, beta2), weight_decay=training["weightDecay"])


def report_memory(events: EventWriter, step: int, phase: str, device: torch.device) -> None:
    for reading in memory_readings(device):
        events.memory(step=step, phase=phase, **reading)  # type: ignore[arg-type]
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)  # so the next phase's peak is its own


def train(spec: dict[str, Any], events: EventWriter, work_dir: Path, stop: StopSignal | None = None) -> tuple[str, str, int]:
    """Run a validated, supported spec. Returns (final state, message, steps completed)."""
    started = time.monotonic()
    trainer, group_size = spec["trainer"], spec["algorithm"]["groupSize"]
    total_steps = trainer["steps"]

    # ------------------------------------------------------------------ setup
    seed_everything(spec["seed"])
    set_cpu_threads(trainer["cpuThreads"])
    device = resolve_device(trainer["device"])
    events.log("info", f"device {device}, torch {torch.__version__}, {torch.get_num_threads()} CPU threads, seed {spec['seed']}")

    datasets: dict[str, Dataset] = {d["name"]: load_dataset(d, i, spec["seed"], work_dir) for i, d in enumerate(spec["datasets"])}
    rewards = {r["name"]: bind_reward(r) for r in spec["rewards"]}
    row_rng = np.random.default_rng(spec["seed"])
    environments = [build_environment(e, i, datasets, rewards, row_rng) for i, e in enumerate(spec["environments"])]
    for env in environments:
        for note in env.notes:
            events.log("warning", note)

    actors: dict[str, Actor] = {}
    for i, actor_spec in enumerate(spec["actors"]):
        loaded = load_actor_model(actor_spec, i, work_dir)
        loaded.model.to(device)
        training = actor_spec["training"]
        reference = None
        if training["klBeta"] > 0:
            reference = copy.deepcopy(loaded.model).eval().requires_grad_(False)
        loss_type = effective_loss_type(spec["algorithm"]["name"], training["lossType"])
        actors[actor_spec["name"]] = Actor(i, actor_spec, loaded, make_optimizer(loaded.model, training), reference, loss_type)
        events.log(
            "info",
            f'actor "{actor_spec["name"]}": {loaded.description}, {loaded.num_params:,} parameters, '
            f'vocabulary {loaded.tokenizer.vocab_size}, loss {loss_type}, optimizer {training["optimizer"]}',
        )
    unused = [name for name in actors if not any(env.actor == name for env in environments)]
    if unused:
        events.log("warning", f"actors in no environment (never trained): {', '.join(unused)}")
    prompts_per_env = allocate_prompts(trainer["promptsPerStep"], [env.spec["weight"] for env in environments])
    events.log(
        "info",
        f"{total_steps} steps x {trainer['promptsPerStep']} prompts x {group_size} samples; "
        + ", ".join(f'"{env.name}": {n} prompts/step' for env, n in zip(environments, prompts_per_env)),
    )
    report_memory(events, 0, "setup", device)

    last_step_seconds = 0.0
    for step in range(1, total_steps + 1):
        if stop is not None and stop.is_set():
            reason = getattr(stop, "reason", None) or "a stop request"
            return "cancelled", f"cancelled by {reason} after step {step - 1} of {total_steps}", step - 1
        limit = trainer.get("maxDurationSeconds")
        elapsed = time.monotonic() - started
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
        rollout_seconds: dict[str, float] = defaultdict(float)
        for env, n_prompts in zip(environments, prompts_per_env):
            if n_prompts == 0:
                continue
            actor = actors[env.actor]
            tokenizer = actor.loaded.tokenizer
            row_indices = env.sampler.take(n_prompts)
            prompts = [env.render(env.dataset.rows[r], r, tokenizer) for r in row_indices]
            prompt_ids = [tokenizer.encode(p.text, p.add_special_tokens) for p in prompts for _ in range(group_size)]
            t0 = time.monotonic()
            rollout = sample(actor.loaded.model, tokenizer, prompt_ids, actor.spec["sampling"], device)
            rollout_seconds[env.actor] += time.monotonic() - t0
            parts[env.actor].append(EnvRollout(env, row_indices, prompts, rollout))
        report_memory(events, step, "rollout", device)

        # -------------------------------------------------------------- reward
        for env_parts in parts.values():
            for part in env_parts:
                for k, completion in enumerate(part.rollout.texts):
                    g = k // group_size
                    row = part.env.dataset.rows[part.row_indices[g]]
                    total, components = part.env.score(part.prompts[g].user, completion, row)
                    part.rewards.append(total)
                    part.components.append(components)
        report_memory(events, step, "reward", device)

        # -------------------------------------------------------------- update
        # Per actor: advantages within each group, then iterationsPerBatch clipped PG steps.
        updates: dict[str, dict[str, float]] = {}
        for name, actor in actors.items():
            if not parts[name]:
                continue
            training = actor.spec["training"]
            model = actor.loaded.model
            batch = concat_rollouts([p.rollout for p in parts[name]], actor.loaded.tokenizer.pad_token_id)
            rewards_t = torch.tensor([r for p in parts[name] for r in p.rewards], dtype=torch.float32)
            advantages = group_advantages(rewards_t, group_size, training["advantageNorm"])
            offset = 0
            for p in parts[name]:
                p.advantages = advantages[offset : offset + len(p.rewards)].tolist()
                offset += len(p.rewards)
            advantages = advantages.to(device)
            mask = batch.completion_mask

            ref_logp = None
            if actor.reference is not None:
                with torch.no_grad():
                    ref_logp, _ = completion_logprobs(actor.reference, batch, actor.temperature)
                report_memory(events, step, "reference", device)

            lr = lr_at(step, training["learningRate"], training["scheduler"]["type"], training["scheduler"]["warmupSteps"], total_steps)
            for group in actor.optimizer.param_groups:
                group["lr"] = lr
            model.train()
            sums: dict[str, float] = defaultdict(float)
            iterations = training["iterationsPerBatch"]
            for iteration in range(iterations):
                logp, entropy = completion_logprobs(model, batch, actor.temperature, with_entropy=iteration == 0)
                if iteration == 0:
                    # The batch's log-probs before any update: the ratio's denominator for every iteration.
                    old_logp = logp.detach()
                    first = {
                        "logprob_gap": float(masked_mean((batch.sampler_logprobs - old_logp).abs(), mask)),
                        "entropy": float(masked_mean(entropy, mask)) if entropy is not None else float("nan"),
                    }
                loss, stats = policy_loss(
                    logp,
                    old_logp,
                    advantages,
                    mask,
                    loss_type=actor.loss_type,
                    clip_eps_low=training["clipEpsLow"],
                    clip_eps_high=training["clipEpsHigh"],
                    max_completion_len=int(actor.spec["sampling"]["maxNewTokens"]),
                    ref_logp=ref_logp,
                    kl_beta=training["klBeta"],
                )
                actor.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), training["maxGradNorm"])
                actor.optimizer.step()
                sums["loss"] += float(loss.detach())
                sums["grad_norm"] += float(grad_norm)
                for key, value in stats.items():
                    sums[key] += value
            generated_tokens = float(mask.sum())
            updates[name] = {
                **{key: value / iterations for key, value in sums.items()},
                **first,
                "lr": lr,
                "completion_len": generated_tokens / mask.shape[0],
                "advantage/mean": float(advantages.mean()),
                "tokens_per_s": generated_tokens / max(rollout_seconds[name], 1e-9),
            }
        report_memory(events, step, "update", device)

        # -------------------------------------------------------------- report
        last_step_seconds = time.monotonic() - step_started
        for name, update in updates.items():
            all_rewards = torch.tensor([r for p in parts[name] for r in p.rewards])
            values = {"reward/mean": float(all_rewards.mean()), "reward/std": float(all_rewards.std(correction=0))}
            for reward_name in {n for p in parts[name] for c in p.components for n in c}:
                per_sample = [c[reward_name] for p in parts[name] for c in p.components if reward_name in c]
                values[f"reward/{reward_name}"] = float(np.mean(per_sample))
            values.update(update)
            values["step_time_s"] = last_step_seconds
            events.metric(step, values, actor=name)
        emit_episodes(events, step, [p for env_parts in parts.values() for p in env_parts], group_size, trainer["episodesPerStep"])

        # -------------------------------------------------------------- checkpoint
        every = trainer["checkpointEvery"]
        if every > 0 and (step % every == 0 or step == total_steps):
            for name, actor in actors.items():
                folder = work_dir / "checkpoints" / name / f"step-{step}"
                save_checkpoint(actor.loaded, folder)
                events.checkpoint(step=step, path=str(folder), actor=name)
            report_memory(events, step, "checkpoint", device)

    return "succeeded", f"finished {total_steps} steps", total_steps


def emit_episodes(events: EventWriter, step: int, parts: list[EnvRollout], group_size: int, limit: int) -> None:
    """Up to `limit` transcripts: first sample of each group across environments, then the second…"""
    picks = sorted(
        ((s, e, g) for e, part in enumerate(parts) for g in range(len(part.row_indices)) for s in range(group_size)),
    )[:limit]
    for s, e, g in picks:
        part = parts[e]
        k = g * group_size + s
        prompt = part.prompts[g]
        messages = []
        if prompt.system:
            messages.append({"actor": part.env.actor, "role": "system", "content": prompt.system, "trained": False})
        messages.append({"actor": part.env.dataset.name, "role": "user", "content": prompt.user, "trained": False})
        messages.append({"actor": part.env.actor, "role": "assistant", "content": part.rollout.texts[k], "trained": True})
        events.episode(
            step=step,
            environment=part.env.name,
            group=g,
            sample=s,
            datasetRow=part.row_indices[g],
            messages=messages,
            reward=part.rewards[k],
            rewardComponents=part.components[k],
            advantage=part.advantages[k],
        )
