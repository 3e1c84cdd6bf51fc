"""The PPO family's step: critics value the rollout, GAE turns rewards into per-token advantages for the
policy update (update.py, unchanged), and each critic fits the returns with the clipped value loss.

- ppo / ippo: a critic per actor over the actor's own sequences (its completion, or its view of a
  conversation); GAE over the actor's own tokens (ppo_math.gae). With one actor the two are the same;
  ippo names the multi-agent use: every actor learns independently with its own critic.
- mappo: a centralised critic per multi-actor environment reads the whole conversation and has a head
  per actor; each actor's turns are its time steps (the value of the conversation just before the turn),
  GAE runs over them (ppo_math.turn_gae) and every token of a turn takes the turn's advantage.

With `algorithm.valueNorm` (value_norm.py) a critic's outputs are normalised values: GAE reads them
denormalised, and the critic fits returns normalised by the running statistics.

The training loop calls `targets` for each actor before its policy update, then `fit_critics` once.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import torch

from ...launch.distributed import RankContext
from ...engines.rollout.sampling import Rollout
from ...residency.manager import Resident
from ...spec.runspec_types import Algorithm, RunSpec, Trainer
from ..micro_batch import ChoiceLog, reported, resolve_for_training
from ..names import PPO_FAMILY
from .critic import Critic, build_critic
from .ppo_math import explained_variance, gae, terminal_rewards, turn_gae, value_loss, whiten

if TYPE_CHECKING:
    from ...actors import Actor
    from ..training_shares import ConversationPart, Share

PPO_NAMES = PPO_FAMILY
CENTRALISED = ("mappo", "happo")  # one critic per environment reading the whole conversation, a head per actor


@dataclass(frozen=True)
class PpoSettings:
    name: str
    gamma: float
    lam: float
    value_clip: float | None
    critic_lr: float | None
    value_norm: bool = True

    @property
    def centralised(self) -> bool:
        return self.name in CENTRALISED


def ppo_settings(algorithm: Algorithm) -> PpoSettings:
    clip = float(algorithm.value_clip)
    lr = algorithm.critic_learning_rate
    norm = algorithm.value_norm
    return PpoSettings(
        algorithm.name, float(algorithm.gamma), float(algorithm.lambda_), clip if clip > 0 else None, float(lr) if lr else None,
        value_norm=True if norm is None else bool(norm),
    )


@dataclass
class CriticBatch:
    """What a critic fits: sequences, the position of every valued state, its head, old value and return."""

    input_ids: torch.Tensor  # [N, L]
    attention_mask: torch.Tensor  # [N, L]
    heads: torch.Tensor  # [N, L] long: which head values each position
    mask: torch.Tensor  # [N, L] 1 where a state is valued
    old_values: torch.Tensor  # [N, L] the critic's outputs at the rollout (normalised with valueNorm)
    returns: torch.Tensor  # [N, L] in the rewards' units (update_critic normalises them with valueNorm)


@dataclass
class Targets:
    advantages: torch.Tensor  # [B, T] per completion token, whitened over the actor's tokens
    row_advantages: list[float]  # each row's mean advantage over its tokens (transcripts show it)
    critic_batch: CriticBatch | None  # ppo/ippo: the actor's own; mappo: fitted once per environment
    returns_mean: float
    explained_variance: float


@dataclass
class Critics:
    """The run's critics: by actor (ppo, ippo) or by environment (mappo)."""

    settings: PpoSettings
    by_actor: dict[str, Critic] = field(default_factory=dict)
    by_environment: dict[str, Critic] = field(default_factory=dict)
    # mappo: per environment, the batch the step's targets were computed from (filled by `targets`)
    central: dict[str, tuple[CriticBatch, dict[str, list[list[tuple[int, float]]]]]] = field(default_factory=dict)

    def all(self) -> list[Critic]:
        seen: dict[str, Critic] = {}
        for c in [*self.by_actor.values(), *self.by_environment.values()]:
            seen[c.name] = c
        return list(seen.values())


def build_critics(run: RunSpec, actors: dict[str, "Actor"], environments: list[Any], ctx: RankContext, work_dir: Path, log: Any) -> Critics:
    settings = ppo_settings(run.algorithm)
    critics = Critics(settings)
    micro = run.trainer.micro_batch_size
    if settings.centralised:
        for env in environments:
            trainable = [a for a in run.environments[env.index].actors if a in actors and actors[a].trainable]
            if not trainable:
                continue
            owner = actors[trainable[0]]
            critic = build_critic(f'{env.name}/critic', owner, trainable, settings.critic_lr, settings.value_norm, ctx, work_dir, micro)
            critics.by_environment[env.name] = critic
            log("info", f'centralised critic of environment "{env.name}" on the base of "{owner.name}", one value head per actor: {", ".join(trainable)}')
        return critics
    for name, actor in actors.items():
        if actor.trainable:
            critics.by_actor[name] = build_critic(f"{name}/critic", actor, [name], settings.critic_lr, settings.value_norm, ctx, work_dir, micro)
    log("info", f'critics ({settings.name}): one per trainable actor, each a copy of its actor\'s base with a value head')
    return critics


def _values(critic: Critic, cb: CriticBatch) -> torch.Tensor:
    with critic.backend.forward_context():
        all_heads = critic.model(cb.input_ids, cb.attention_mask)
    return all_heads.gather(-1, cb.heads.unsqueeze(-1)).squeeze(-1)


# ---------------------------------------------------------------------------- ppo / ippo: token level
def actor_targets(critic: Critic, batch: Rollout, mask: torch.Tensor, rewards: list[float], settings: PpoSettings) -> Targets:
    """Per-token advantages of one actor's batch from its own critic (GAE over its tokens)."""
    input_ids = torch.cat([batch.prompt_ids, batch.completion_ids], dim=1).to(critic.device)
    attention = torch.cat([batch.prompt_mask, batch.completion_mask], dim=1).to(critic.device)
    p, t = batch.prompt_ids.shape[1], batch.completion_ids.shape[1]
    m = mask.to(critic.device)
    # The value of the state before completion token j sits at position p - 1 + j.
    state_mask = torch.zeros_like(attention)
    state_mask[:, p - 1 : p + t - 1] = m
    cb = CriticBatch(input_ids, attention, torch.zeros_like(attention), state_mask, torch.zeros(attention.shape), torch.zeros(attention.shape))
    with torch.no_grad():
        critic.model.eval()
        outputs = _values(critic, cb)[:, p - 1 : p + t - 1] * m
    values = critic.denormalize(outputs) * m
    r = torch.tensor(rewards, dtype=torch.float32, device=m.device)
    advantages, returns = gae(terminal_rewards(r, m), values, m, settings.gamma, settings.lam)
    cb.old_values = torch.zeros(attention.shape, device=m.device)
    cb.returns = torch.zeros(attention.shape, device=m.device)
    cb.old_values[:, p - 1 : p + t - 1] = outputs
    cb.returns[:, p - 1 : p + t - 1] = returns
    return _finish(advantages, returns, values, m, cb)


def _finish(advantages: torch.Tensor, returns: torch.Tensor, values: torch.Tensor, m: torch.Tensor, cb: CriticBatch | None) -> Targets:
    white = whiten(advantages, m)
    per_row = (white * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)
    n = m.sum().clamp(min=1)
    return Targets(white, per_row.tolist(), cb, float((returns * m).sum() / n), explained_variance(values, returns, m))


# ---------------------------------------------------------------------------- mappo: turn level, centralised
def _encode_conversation(critic: Critic, episode: Any) -> tuple[list[int], list[int]]:
    """The global state in the critic's tokens: every actor's system prompt (what each one privately
    knows, as MAPPO's centralised critic sees every agent's observation), the user prompt and every
    message; and the index of the last token before each message (the state it was spoken in)."""
    tok = critic.tokenizer
    private = "".join(f"{actor} knows: {text}\n" for actor, text in sorted(episode.systems.items()) if text)
    ids = tok.encode(private + episode.user, True) or [0]
    before: list[int] = []
    for m in episode.messages:
        before.append(len(ids) - 1)
        ids += tok.encode(f"\n{m.actor}: {m.text}", False)
    return ids, before


def prepare_central(critics: Critics, conversations: list["ConversationPart"], rewards_of: Any) -> None:
    """mappo: for every environment with a centralised critic, value each actor's turns of every episode
    (no gradient) and run GAE over each actor's turns. Results wait in `critics.central` for `targets`."""
    s = critics.settings
    critics.central.clear()
    for conv in conversations:
        critic = critics.by_environment.get(conv.env.name)
        if critic is None:
            continue
        encoded = [_encode_conversation(critic, e) for e in conv.episodes]
        width = max(len(ids) for ids, _ in encoded)
        n = len(encoded)
        input_ids = torch.zeros((n, width), dtype=torch.long)
        attention = torch.zeros((n, width), dtype=torch.long)
        for i, (ids, _) in enumerate(encoded):
            input_ids[i, : len(ids)] = torch.tensor(ids)
            attention[i, : len(ids)] = 1
        input_ids, attention = input_ids.to(critic.device), attention.to(critic.device)
        with torch.no_grad():
            critic.model.eval()
            with critic.backend.forward_context():
                all_outputs = critic.model(input_ids, attention)  # [N, L, heads]
        all_values = critic.denormalize(all_outputs)
        heads = torch.zeros_like(attention)
        mask = torch.zeros_like(attention)
        old = torch.zeros(attention.shape, device=critic.device)
        ret = torch.zeros(attention.shape, device=critic.device)
        per_actor: dict[str, list[list[tuple[int, float]]]] = defaultdict(list)  # actor -> per episode [(turn position, advantage)]
        for i, (e, (_, before)) in enumerate(zip(conv.episodes, encoded)):
            for actor in critic.heads:
                h = critic.head_of(actor)
                turns = [k for k, m in enumerate(e.messages) if m.actor == actor and m.role == "assistant"]
                positions = [before[k] for k in turns]
                values = [float(all_values[i, pos, h]) for pos in positions]
                outputs = [float(all_outputs[i, pos, h]) for pos in positions]
                reward = float(rewards_of(e, actor))
                turn_rewards = [0.0] * len(turns)
                if turns:
                    turn_rewards[-1] = reward
                advantages, returns = turn_gae(turn_rewards, values, s.gamma, s.lam)
                for pos, out, r in zip(positions, outputs, returns):
                    # Two actors cannot speak from the same state: positions never collide across heads.
                    heads[i, pos], mask[i, pos], old[i, pos], ret[i, pos] = h, 1, out, r
                per_actor[actor].append([(k, a) for k, a in zip(turns, advantages)])
        critics.central[conv.env.name] = (CriticBatch(input_ids, attention, heads, mask, old, ret), dict(per_actor))


def central_targets(critics: Critics, name: str, conversations: list["ConversationPart"], mask: torch.Tensor) -> Targets:
    """mappo: the actor's per-token advantages (each token of a turn takes the turn's advantage), rows in
    the order of its shares (training_shares.actor_shares: its conversations in order, episodes in order)."""
    advantages = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
    row = 0
    values_l: list[float] = []
    returns_l: list[float] = []
    for conv in conversations:
        if name not in conv.env.actors:
            continue
        critic = critics.by_environment[conv.env.name]
        cb, per_actor = critics.central[conv.env.name]
        h = critic.head_of(name)
        for i, (e, turn_advs) in enumerate(zip(conv.episodes, per_actor[name])):
            lengths = {k: len(m.ids) for k, m in enumerate(e.messages)}
            per_token = [a for k, a in turn_advs for _ in range(lengths[k])]
            own = torch.nonzero(mask[row] > 0).squeeze(1)
            if len(own) != len(per_token):
                raise RuntimeError(f'mappo: actor "{name}" has {len(own)} trained tokens in episode {i} of "{conv.env.name}" but its turns hold {len(per_token)}')
            advantages[row, own] = torch.tensor(per_token, dtype=torch.float32, device=mask.device)
            valued = (cb.mask[i] > 0) & (cb.heads[i] == h)
            values_l += critic.denormalize(cb.old_values[i][valued]).tolist()
            returns_l += cb.returns[i][valued].tolist()
            row += 1
    v, r = torch.tensor(values_l or [0.0]), torch.tensor(returns_l or [0.0])
    white = whiten(advantages, mask)
    m = mask.to(torch.float32)
    per_row = ((white * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)).tolist()
    ev = explained_variance(v, r, torch.ones_like(v)) if returns_l else float("nan")
    return Targets(white, per_row, None, sum(returns_l) / max(len(returns_l), 1), ev)


# ---------------------------------------------------------------------------- the critics' update
def _row_chunks(rows: int, ctx: RankContext, size: int | None) -> list[list[int]]:
    """This rank's micro-batches of row indices, the same number on every rank ([] pads a short rank)."""
    per_rank = math.ceil(rows / ctx.world_size)
    size = size or per_rank
    count = max(1, math.ceil(per_rank / size))
    start, end = ctx.row_slice(rows)
    return [list(range(start + k * size, min(start + (k + 1) * size, end))) for k in range(count)]


def update_critic(critic: Critic, cb: CriticBatch, iterations: int, max_grad_norm: float, clip: float | None, ctx: RankContext, micro_batch_size: int | None) -> dict[str, float]:
    """`iterations` optimizer steps of the clipped value loss over the batch; gradients of the whole batch
    (each micro-batch's token mean is rescaled by its share of the batch's tokens)."""
    total = float(cb.mask.sum())
    if total == 0:
        return {}
    if critic.norm is not None:
        # The running statistics take this batch's returns first, then the critic fits them normalised
        # (the MAPPO reference's order), from the outputs it had at the rollout (old_values, normalised).
        critic.norm.update(cb.returns, cb.mask)
        cb = CriticBatch(cb.input_ids, cb.attention_mask, cb.heads, cb.mask, cb.old_values, critic.norm.normalize(cb.returns) * cb.mask)
    chunks = _row_chunks(cb.input_ids.shape[0], ctx, micro_batch_size)
    critic.model.train()
    losses: list[float] = []
    clip_fracs: list[float] = []
    for _ in range(iterations):
        critic.backend.zero_grad()
        loss_sum = 0.0
        for k, idx in enumerate(chunks):
            weight = 1.0
            if not idx:  # padding: one real row, no weight (keeps a sharded backend's collectives in step)
                idx, weight = [0], 0.0
            part = CriticBatch(*(t[idx] for t in (cb.input_ids, cb.attention_mask, cb.heads, cb.mask, cb.old_values, cb.returns)))
            with critic.backend.accumulate(last=k == len(chunks) - 1):
                values = _values(critic, part)
                loss, stats = value_loss(values, part.old_values, part.returns, part.mask, clip)
                scale = weight * float(part.mask.sum()) / total
                critic.backend.backward(loss * scale * critic.backend.loss_scale())
            loss_sum += float(loss.detach()) * scale
            clip_fracs.append(stats["value/clip_frac"])
        critic.backend.clip(max_grad_norm)
        critic.backend.step()
        losses.append(ctx.sum_floats([loss_sum])[0] if ctx.distributed else loss_sum)
    return {"value/loss": sum(losses) / len(losses), "value/clip_frac": sum(clip_fracs) / max(len(clip_fracs), 1)}


def critic_batches(critics: Critics, pending: dict[str, list[CriticBatch]]) -> Iterable[tuple[Critic, CriticBatch]]:
    """Each critic with what it fits this step: an actor's own batch (ppo, ippo) or its environment's
    conversations (mappo)."""
    for critic in critics.by_actor.values():
        for cb in pending.get(critic.name, []):
            yield critic, cb
    for env_name, critic in critics.by_environment.items():
        if env_name in critics.central:
            yield critic, critics.central[env_name][0]



# ---------------------------------------------------------------------------- what the training loop calls
def register(critics: Critics, residency: Any) -> None:
    """Critics are placed like actors: on the device for their phase, on the host between phases."""
    for critic in critics.all():
        residency.add(Resident(critic.name, critic.device, backend=critic.backend))


def targets(critics: Critics, name: str, batch: Rollout, mask: torch.Tensor, rewards: list[float], conversations: list["ConversationPart"]) -> Targets:
    """The actor's per-token advantages: from its own critic (ppo, ippo) or its environments' centralised
    critics (mappo, after `prepare_central`)."""
    if critics.settings.centralised:
        return central_targets(critics, name, conversations, mask)
    return actor_targets(critics.by_actor[name], batch, mask, rewards, critics.settings)


def critic_of(critics: Critics, name: str, conversations: list["ConversationPart"]) -> list[str]:
    """The residents an actor's update reads besides its own: the critics that value it."""
    if not critics.settings.centralised:
        return [critics.by_actor[name].name]
    return [critics.by_environment[c.env.name].name for c in conversations if name in c.env.actors and c.env.name in critics.by_environment]


def fit_critics(
    critics: Critics, pending: dict[str, list[CriticBatch]], residency: Any, trainer: Trainer, actors: dict[str, "Actor"], ctx: RankContext,
    choices: ChoiceLog | None = None,
) -> dict[str, dict[str, float]]:
    """Every critic's update for the step; metrics per actor it values (a centralised critic's go to each of its actors).
    With trainer.microBatchSize "auto" each critic's micro-batches are sized to fit (micro_batch.py), as
    `value/micro_batch_size`, logged through `choices`."""
    out: dict[str, dict[str, float]] = {}
    for critic, cb in critic_batches(critics, pending):
        owner = actors[critic.heads[0]].section.training
        residency.for_update(critic.name)
        micro, chosen = resolve_for_training(
            trainer.micro_batch_size, critic.backend.module, owner, cb.input_ids.shape[0], cb.input_ids.shape[1], ctx
        )
        if choices is not None:
            choices.report(critic.name, chosen)
        stats = update_critic(critic, cb, owner.iterations_per_batch, owner.max_grad_norm, critics.settings.value_clip, ctx, micro)
        if reported(chosen):
            stats = {**stats, "value/micro_batch_size": float(chosen.size)}
        residency.observe("update")
        for actor in critic.heads:
            out.setdefault(actor, {}).update(stats)
    return out


def save_critics(folder: Path, critics: Critics, ctx: RankContext) -> None:
    """Each critic's weights and optimizer state in `critics/` of a training checkpoint (rank 0 writes)."""
    states = {c.name: (c.backend.full_state_dict(), c.backend.optimizer_state(), c.norm.state_dict() if c.norm else None) for c in critics.all()}
    if not ctx.is_main:
        return
    target = folder / "critics"
    target.mkdir(parents=True, exist_ok=True)
    for name, (weights, optimizer, norm) in states.items():
        torch.save({"weights": weights, "optimizer": optimizer, "value_norm": norm}, target / f"{name.replace('/', '__')}.pt")


def load_critics(folder: Path, critics: Critics) -> None:
    for critic in critics.all():
        path = folder / "critics" / f"{critic.name.replace('/', '__')}.pt"
        if not path.exists():
            raise FileNotFoundError(f"{folder}: no state for critic {critic.name} (was the checkpoint written by a {critics.settings.name} run?)")
        state = torch.load(path, map_location="cpu", weights_only=False)
        critic.backend.load_full_state_dict(state["weights"])
        critic.backend.load_optimizer_state(state["optimizer"])
        if critic.norm is not None:
            if state.get("value_norm") is None:
                raise ValueError(f"{folder}: critic {critic.name} was saved without value normalisation, and this run has algorithm.valueNorm on")
            critic.norm.load_state_dict(state["value_norm"])
