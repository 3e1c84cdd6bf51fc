"""What each trainable actor trains on in a step: its sequences, loss mask and rewards from every
environment it took part in (single-turn completions, or its own turns of conversations).

An actor that plays several roles of one environment (`environments[].roles`, envs/roles.py) gets one share per
role, each with its role's seat ("environment/role", RAE's baseline key): the learner concatenates all of an
actor's shares into one batch, so both roles' tokens train the one set of weights in one update, while advantages
and baselines stay per role (X's wins are O's losses)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..envs.collaborative import CollaborativeEnvironment, Episode, actor_batch
from ..envs.roles import roles_played_by
from .dapo import overlong_loss_mask
from ..engines.rollout.sampling import Rollout
from ..envs.single_turn import EnvRollout

if TYPE_CHECKING:
    from ..actors import Actor


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
    truncation: tuple[int, int] = (0, 0)  # (completions or turns cut off at maxNewTokens, all of them)
    seat: str = ""  # "environment/role" (the role is the actor where the environment has no roles)


def share_seats(name: str, single: list[EnvRollout], conversations: list[ConversationPart]) -> list[str]:
    """"environment/role" of each of the actor's shares, in `actor_shares`' order (the seats RAE keeps baselines for)."""
    return [f"{p.env.name}/{name}" for p in single] + [f"{c.env.name}/{role}" for c in conversations for role in roles_played_by(c.env, name)]


def actor_shares(name: str, actor: Actor, single: list[EnvRollout], conversations: list[ConversationPart], overlong_mode: str = "off") -> list[Share]:
    """The actor's training data from every environment it takes part in this step (conversation batches on the
    actor's own device).

    overlong_mode "filter": single-turn completions cut off at maxNewTokens train nothing."""
    max_new = int(actor.section.sampling.max_new_tokens)
    shares = []
    for part in single:

        def store(values: list[float], part: EnvRollout = part) -> None:
            part.advantages = values

        mask, ended = part.rollout.completion_mask, part.rollout.ended
        truncation = (0, len(part.rewards))
        if ended is not None:
            truncation = (int((~ended).sum()), len(part.rewards))
            if overlong_mode == "filter":
                mask = overlong_loss_mask(mask, ended)
        shares.append(Share(part.rollout, mask, part.rewards, part.components, store, max_new, truncation, f"{part.env.name}/{name}"))
    for conv in conversations:
        # Each role the actor plays here (without roles: the actor itself, when it plays in this environment).
        for role in roles_played_by(conv.env, name):
            shares.append(_role_share(role, conv, actor, max_new))
    return shares


def _role_share(role: str, conv: ConversationPart, actor: Actor, max_new: int) -> Share:
    """One role's turns of a conversation environment's episodes (groups contiguous, as the episodes are)."""
    episodes = conv.episodes

    def store_conv(values: list[float]) -> None:
        for e, v in zip(episodes, values):
            e.advantages[role] = v

    batch = actor_batch([e.views[role] for e in episodes], actor.loaded.tokenizer.pad_token_id, actor.device)
    return Share(
        batch.rollout,
        batch.loss_mask,
        [e.rewards[role] for e in episodes],
        [e.components[role] for e in episodes],
        store_conv,
        # Dr. GRPO's constant: the most tokens the actor can produce in one episode.
        max_new * conv.env.spec["maxTurns"],
        (
            sum(1 for e in episodes for m in e.messages if m.actor == role and not m.ended),
            sum(1 for e in episodes for m in e.messages if m.actor == role),
        ),
        f"{conv.env.name}/{role}",
    )
