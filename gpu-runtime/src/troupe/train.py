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

from .schedule import sample as dsl_sample
from .collaborative import CollaborativeEnvironment, Episode, actor_batch, build_collaborative, run_turns, schedule_seed
from .data import Dataset, load_dataset
from .environments import RenderedPrompt, SingleTurnEnvironment, allocate_prompts, build_environment
from .events import EventWriter
from .grpo import effective_loss_type, group_advantages, masked_mean, policy_loss
from .models import LoadedModel, load_actor_model, save_checkpoint
from .policy import completion_logprobs
from .api_actor import ApiActor, build_api_actor
from .python_rewards import PythonReward, bind_python_reward
from .rewards import bind_reward
from .rollout import Rollout, _pad_to, concat_rollouts, sample
from .lr_schedule import lr_at
from .lora import adapters_disabled, apply_lora, has_lora, save_adapter
from .system import memory_readings, resolve_device, seed_everything, set_cpu_threads


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


@dataclass
class ConversationPart:
    """One collaborative environment's share of a step: G episodes per row (groups contiguous)."""

    env: CollaborativeEnvironment
    row_indices: list[int]
    episodes: list[Episode]


@dataclass
class Share:
    """What one actor trains on from one environment: sequences, loss mask, rewards (groups contiguous)."""

    rollout: Rollout
    loss_mask: torch.Tensor
    rewards: list[float]
    components: list[dict[str, float]]
    set_advantages: Any  # callable(list[float]) storing the advantages back for episodes
    max_len: int  # Dr. GRPO's constant normaliser for these sequences


def make_optimizer(model: torch.nn.Module, training: dict[str, Any]) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if training["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=training["learningRate"], weight_decay=training["weightDecay"])
    beta1, beta2 = training["betas"]
    return torch.optim.AdamW(params, lr=training["learningRate"], betas=(beta1, beta2), weight_decay=training["weightDecay"])


def report_memory(events: EventWriter, step: int, phase: str, device: torch.device, actor: str | None = None) -> None:
    for reading in memory_readings(device):
        events.memory(step=step, phase=phase, actor=actor, **reading)  # type: ignore[arg-type]
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
    rewards: dict[str, Any] = {
        r["name"]: bind_python_reward(r) if r["source"]["kind"] == "python" else bind_reward(r) for r in spec["rewards"]
    }
    for reward in rewards.values():
        if isinstance(reward, PythonReward):
            reward.report = lambda message: events.log("error", message)
    row_rng = np.random.default_rng(spec["seed"])
    environments: list[Any] = [
        build_collaborative(e, i, datasets, rewards, row_rng) if e["kind"] in ("collaborative", "adversarial") else build_environment(e, i, datasets, rewards, row_rng)
        for i, e in enumerate(spec["environments"])
    ]
    for env in environments:
        for note in env.notes:
            events.log("warning", note)

    actors: dict[str, Actor] = {}
    api_actors: dict[str, ApiActor] = {}
    for i, actor_spec in enumerate(spec["actors"]):
        if actor_spec["backend"] == "openai":
            api_actors[actor_spec["name"]] = build_api_actor(actor_spec, i)
            events.log("info", f'actor "{actor_spec["name"]}": {actor_spec["api"]["model"]} at {actor_spec["api"]["baseUrl"]} (OpenAI-compatible API, frozen)')
            continue
        loaded = load_actor_model(actor_spec, i, work_dir)
        loaded.model.to(device)
        training = actor_spec["training"]
        loss_type = effective_loss_type(spec["algorithm"]["name"], training["lossType"])
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
        events.log(
            "info",
            f'actor "{actor_spec["name"]}": {loaded.description}, {loaded.num_params:,} parameters, '
            f'vocabulary {loaded.tokenizer.vocab_size}, loss {loss_type}, optimizer {training["optimizer"]}{lora_note}',
        )
    unused = [name for name in [*actors, *api_actors] if not any(name in env.spec["actors"] for env in environments)]
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
                ks = range(len(part.rollout.texts))
                scored = part.env.score_batch(
                    [part.prompts[k // group_size].user for k in ks],
                    part.rollout.texts,
                    [part.env.dataset.rows[part.row_indices[k // group_size]] for k in ks],
                )
                part.rewards = [total for total, _ in scored]
                part.components = [components for _, components in scored]
        for conv in conversations:
            conv.env.score_all(conv.episodes)
        report_memory(events, step, "reward", device)

        # -------------------------------------------------------------- update
        # Per actor: advantages within each group, then iterationsPerBatch clipped PG steps.
        updates: dict[str, dict[str, float]] = {}
        shares_of: dict[str, list[Share]] = {}
        for name, actor in actors.items():
            if not actor.trainable:
                continue
            shares = actor_shares(name, actor, parts[name], conversations, device)
            # An actor that produced no token this step (a round spec may skip it) is not updated.
            if not shares or sum(int(sh.loss_mask.sum()) for sh in shares) == 0:
                continue
            shares_of[name] = shares
            training = actor.spec["training"]
            model = actor.loaded.model
            pad = actor.loaded.tokenizer.pad_token_id
            batch = concat_rollouts([sh.rollout for sh in shares], pad)
            width = batch.completion_ids.shape[1]
            mask = torch.cat([_pad_to(sh.loss_mask, width, 0, left=False) for sh in shares])
            rewards_t = torch.tensor([r for sh in shares for r in sh.rewards], dtype=torch.float32)
            advantages = group_advantages(rewards_t, group_size, training["advantageNorm"])
            offset = 0
            for sh in shares:
                sh.set_advantages(advantages[offset : offset + len(sh.rewards)].tolist())
                offset += len(sh.rewards)
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
                    max_completion_len=max(sh.max_len for sh in shares),
                    ref_logp=ref_logp,
                    kl_beta=training["klBeta"],
                )
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
            updates[name] = {
                **{key: value / iterations for key, value in sums.items()},
                **first,
                "lr": lr,
                "completion_len": generated_tokens / mask.shape[0],
                "advantage/mean": float(advantages.mean()),
                "tokens_per_s": generated_tokens / max(rollout_seconds[name], 1e-9),
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
            for name, actor in actors.items():
                if not actor.trainable:
                    continue
                folder = work_dir / "checkpoints" / name / f"step-{step}"
                if has_lora(actor.loaded.model):
                    save_adapter(actor.loaded.model, folder)
                    actor.loaded.tokenizer.save_pretrained(folder)
                else:
                    save_checkpoint(actor.loaded, folder)
                events.checkpoint(step=step, path=str(folder), actor=name)
            report_memory(events, step, "checkpoint", device)

    return "succeeded", f"finished {total_steps} steps", total_steps


def evaluate(events: EventWriter, step: int, environments: list[Any], actors: dict[str, Actor], device: torch.device) -> None:
    """Every held-out row of each single-turn environment, one sample each, with the actor's
    `evalSampling` (else `sampling`). Torch's and numpy's RNG states are restored afterwards, so
    a run with eval trains exactly as the same run without it. Metrics `eval/...` per actor."""
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if device.type == "cuda" else None
    np_state = np.random.get_state()
    per_actor: dict[str, list[tuple[float, dict[str, float], int]]] = defaultdict(list)
    try:
        for env in environments:
            if isinstance(env, CollaborativeEnvironment) or not env.dataset.eval_indices:
                continue
            actor = actors[env.actor]
            tokenizer = actor.loaded.tokenizer
            rows = env.dataset.eval_indices
            prompts = [env.render(env.dataset.rows[r], r, tokenizer) for r in rows]
            sampling = actor.spec.get("evalSampling") or actor.spec["sampling"]
            rollout = sample(actor.loaded.model, tokenizer, [tokenizer.encode(p.text, p.add_special_tokens) for p in prompts], sampling, device)
            scored = env.score_batch([p.user for p in prompts], rollout.texts, [env.dataset.rows[r] for r in rows])
            lengths = rollout.completion_mask.sum(dim=1).tolist()
            per_actor[env.actor].extend((total, components, int(n)) for (total, components), n in zip(scored, lengths))
    finally:
        torch.set_rng_state(cpu_state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)
        np.random.set_state(np_state)
    for name, results in per_actor.items():
        values = {"eval/reward/mean": float(np.mean([t for t, _, _ in results])), "eval/completion_len": float(np.mean([n for _, _, n in results]))}
        for reward_name in sorted({k for _, c, _ in results for k in c}):
            values[f"eval/reward/{reward_name}"] = float(np.mean([c[reward_name] for _, c, _ in results if reward_name in c]))
        values["eval/samples"] = float(len(results))
        events.metric(step, values, actor=name)


def actor_shares(
    name: str, actor: Actor, single: list[EnvRollout], conversations: list[ConversationPart], device: torch.device
) -> list[Share]:
    """The actor's training data from every environment it takes part in this step."""
    max_new = int(actor.spec["sampling"]["maxNewTokens"])
    shares = []
    for part in single:

        def store(values: list[float], part: EnvRollout = part) -> None:
            part.advantages = values

        shares.append(Share(part.rollout, part.rollout.completion_mask, part.rewards, part.components, store, max_new))
    for conv in conversations:
        if name not in conv.env.actors:
            continue
        episodes = conv.episodes

        def store_conv(values: list[float], episodes: list[Episode] = episodes) -> None:
            for e, v in zip(episodes, values):
                e.advantages[name] = v

        batch = actor_batch([e.views[name] for e in episodes], actor.loaded.tokenizer.pad_token_id, device)
        shares.append(
            Share(
                batch.rollout,
                batch.loss_mask,
                [e.rewards[name] for e in episodes],
                [e.components[name] for e in episodes],
                store_conv,
                # Dr. GRPO's constant: the most tokens the actor can produce in one episode.
                max_new * conv.env.spec["maxTurns"],
            )
        )
    return shares


def emit_episodes(
    events: EventWriter,
    step: int,
    parts: list[EnvRollout],
    conversations: list[ConversationPart],
    trained_names: set[str],
    group_size: int,
    limit: int,
) -> None:
    """Up to `limit` transcripts: first sample of each group across environments, then the second…"""
    candidates: list[tuple[int, int, int, Any]] = []
    for e, part in enumerate(parts):
        for g in range(len(part.row_indices)):
            for s in range(group_size):
                candidates.append((s, e, g, lambda part=part, g=g, s=s: single_turn_episode(part, g, s, group_size)))
    for c, conv in enumerate(conversations):
        for episode in conv.episodes:
            candidates.append((episode.sample, len(parts) + c, episode.group, lambda conv=conv, ep=episode: conversation_episode(conv, ep, trained_names)))
    for s, e, g, build in sorted(candidates, key=lambda x: x[:3])[:limit]:
        events.episode(step=step, **build())


def single_turn_episode(part: EnvRollout, g: int, s: int, group_size: int) -> dict[str, Any]:
    k = g * group_size + s
    prompt = part.prompts[g]
    messages = []
    if prompt.system:
        messages.append({"actor": part.env.actor, "role": "system", "content": prompt.system, "trained": False})
    messages.append({"actor": part.env.dataset.name, "role": "user", "content": prompt.user, "trained": False})
    messages.append({"actor": part.env.actor, "role": "assistant", "content": part.rollout.texts[k], "trained": True})
    return dict(
        environment=part.env.name,
        group=g,
        sample=s,
        datasetRow=part.row_indices[g],
        messages=messages,
        reward=part.rewards[k],
        rewardComponents=part.components[k],
        advantage=part.advantages[k],
    )


def conversation_episode(conv: ConversationPart, episode: Episode, trained_names: set[str]) -> dict[str, Any]:
    """The whole conversation. With one trainable actor, its reward, components and advantage; with
    several, the mean reward and advantage, and components keyed `<actor>/<component>`."""
    messages = [{"actor": a, "role": "system", "content": text, "trained": False} for a, text in episode.systems.items()]
    if episode.user:
        messages.append({"actor": conv.env.dataset.name, "role": "user", "content": episode.user, "trained": False})
    for m in episode.messages:
        messages.append({"actor": m.actor, "role": "assistant", "content": m.text, "trained": m.actor in trained_names})
    trained = [a for a in conv.env.actors if a in trained_names] or conv.env.actors
    if len(trained) == 1:
        components = episode.components[trained[0]]
    else:
        components = {f"{a}/{k}": v for a in trained for k, v in episode.components[a].items()}
    fields: dict[str, Any] = dict(
        environment=conv.env.name,
        group=episode.group,
        sample=episode.sample,
        datasetRow=episode.row_index,
        messages=messages,
        reward=float(np.mean([episode.rewards[a] for a in trained])),
        rewardComponents=components,
    )
    advantages = [episode.advantages[a] for a in trained if a in episode.advantages]
    if advantages:
        fields["advantage"] = float(np.mean(advantages))
    return fields
