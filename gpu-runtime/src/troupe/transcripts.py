"""Transcripts out: the `episode` events of a step, single-turn and conversations alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .collaborative import Episode
from .events import EventWriter

if TYPE_CHECKING:  # train.py imports this module
    from .single_turn import EnvRollout
    from .training_shares import ConversationPart


def emit_episodes(
    events: EventWriter,
    step: int,
    parts: list["EnvRollout"],
    conversations: list["ConversationPart"],
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


def single_turn_episode(part: "EnvRollout", g: int, s: int, group_size: int) -> dict[str, Any]:
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


def conversation_episode(conv: "ConversationPart", episode: Episode, trained_names: set[str]) -> dict[str, Any]:
    """The whole conversation. With one trainable actor, its reward, components and advantage; with
    several, the mean reward and advantage, and components keyed `<actor>/<component>`."""
    messages = [{"actor": a, "role": "system", "content": text, "trained": False} for a, text in episode.systems.items()]
    if episode.user:
        messages.append({"actor": conv.env.dataset.name, "role": "user", "content": episode.user, "trained": False})
    for m in episode.messages:
        if m.role == "environment":  # the environment speaking: context, never trained on
            messages.append({"actor": m.actor, "role": "environment", "content": m.text, "trained": False})
        else:
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
