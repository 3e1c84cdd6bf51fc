"""What each trainable actor trains on in a step: its sequences, loss mask and rewards from every
environment it took part in (single-turn completions, or its own turns of conversations)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..envs.collaborative import CollaborativeEnvironment, Episode, actor_batch
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


def actor_shares(
    name: str, actor: Actor, single: list[EnvRollout], conversations: list[ConversationPart], device: torch.device, overlong_mode: str = "off"
) -> list[Share]:
    """The actor's training data from every environment it takes part in this step.

    overlong_mode "filter": single-turn completions cut off at maxNewTokens train nothing."""
    max_new = int(actor.spec["sampling"]["maxNewTokens"])
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
        shares.append(Share(part.rollout, mask, part.rewards, part.components, store, max_new, truncation))
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
                (
                    sum(1 for e in episodes for m in e.messages if m.actor == name and not m.ended),
                    sum(1 for e in episodes for m in e.messages if m.actor == name),
                ),
            )
        )
    return shares
