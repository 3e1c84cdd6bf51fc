"""Transcripts out: the `episode` events of a step, single-turn and conversations alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..envs.collaborative import Episode
from ..envs.roles import roles_of
from ..events import EventWriter

if TYPE_CHECKING:  # train.py imports this module
    from ..envs.single_turn import EnvRollout
    from ..algorithms.training_shares import ConversationPart


def emit_episodes(
    events: EventWriter,
    step: int,
    parts: list["EnvRollout"],
    conversations: list["ConversationPart"],
    trained_names: set[str],
    group_size: int,
    limit: int,
) -> None:
    """Whole GRPO groups, every sample of each, so a reader sees what a sample's advantage was
    measured against. `limit` (trainer.episodesPerStep) counts samples and is rounded up to whole
    groups: groups are taken until at least `limit` samples are chosen, round-robin across
    environments (group 0 of each environment, then group 1, …); 0 emits none. Emitted group by
    group, samples in order."""
    for build in whole_groups(parts, conversations, trained_names, group_size, limit):
        events.episode(step=step, **build())


def whole_groups(
    parts: list["EnvRollout"],
    conversations: list["ConversationPart"],
    trained_names: set[str],
    group_size: int,
    limit: int,
) -> list[Callable[[], dict[str, Any]]]:
    """The episode builders `emit_episodes` emits, in order (pure: nothing is built until called)."""
    groups: list[tuple[int, int, list[Callable[[], dict[str, Any]]]]] = []  # (group, environment, samples)
    for e, part in enumerate(parts):
        for g in range(len(part.row_indices)):
            groups.append((g, e, [lambda part=part, g=g, s=s: single_turn_episode(part, g, s, group_size) for s in range(group_size)]))
    for c, conv in enumerate(conversations):
        by_group: dict[int, list[Episode]] = {}
        for episode in conv.episodes:
            by_group.setdefault(episode.group, []).append(episode)
        for g, episodes in by_group.items():
            ordered = sorted(episodes, key=lambda ep: ep.sample)
            groups.append((g, len(parts) + c, [lambda conv=conv, ep=ep: conversation_episode(conv, ep, trained_names) for ep in ordered]))
    chosen: list[Callable[[], dict[str, Any]]] = []
    for _, _, samples in sorted(groups, key=lambda x: x[:2]):
        if len(chosen) >= limit:
            break
        chosen.extend(samples)
    return chosen


def single_turn_episode(part: "EnvRollout", g: int, s: int, group_size: int) -> dict[str, Any]:
    k = g * group_size + s
    prompt = part.prompts[g]
    messages = []
    if prompt.system:
        messages.append({"actor": part.env.actor, "role": "system", "content": prompt.system, "trained": False})
    messages.append({"actor": part.env.dataset.name, "role": "user", "content": prompt.user, "trained": False})
    messages.append(
        {"actor": part.env.actor, "role": "assistant", "content": part.rollout.texts[k], "trained": True, "turn": 0, "reward": part.rewards[k], "advantage": part.advantages[k]}
    )
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
    role_actor = roles_of(conv.env)
    messages = [{"actor": a, "role": "system", "content": text, "trained": False} for a, text in episode.systems.items()]
    if episode.user:
        messages.append({"actor": conv.env.dataset.name, "role": "user", "content": episode.user, "trained": False})
    # Each turn carries its index in the conversation (the round spec's position) and its speaker's reward
    # and advantage for the episode, so a reader sees per turn who was rewarded for what.
    for turn, m in enumerate(episode.messages):
        if m.role == "environment":  # the environment speaking: context, never trained on
            messages.append({"actor": m.actor, "role": "environment", "content": m.text, "trained": False, "turn": turn})
            continue
        message: dict[str, Any] = {"actor": m.actor, "role": "assistant", "content": m.text, "trained": role_actor.get(m.actor, m.actor) in trained_names, "turn": turn}
        if m.actor in episode.rewards:
            message["reward"] = float(episode.rewards[m.actor])
        if m.actor in episode.advantages:
            message["advantage"] = float(episode.advantages[m.actor])
        messages.append(message)
    # Speakers are roles (each actor its own where the environment has no `roles`): the trained ones are those whose
    # actor trained.
    trained = [r for r, a in role_actor.items() if a in trained_names] or list(role_actor)
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
