"""Agents x turns: each actor's messages sliced by their turn index in the conversation (its position in
the round spec's schedule), as metrics of the step: at turn k, how often the actor spoke there, how many
tokens it wrote and how often it hit maxNewTokens. So a chart shows, per actor, which turn grows or truncates.

An actor that plays several roles (`environments[].roles`, envs/roles.py) speaks under its roles' names; its
turns are those of every role it plays, so self-play reports X's and O's turn indices under the one actor.

Only the first `MAX_TURNS` turn indices are reported, to bound the number of series.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..envs.roles import roles_played_by

MAX_TURNS = 16


def turn_metrics(conversations: Sequence[Any], actor: str) -> dict[str, float]:
    """`turns/<k>/share` (share of the actor's conversations in which it spoke at turn k), `turns/<k>/tokens`
    (mean tokens of those messages; characters for an API actor, which has no token ids) and
    `turns/<k>/truncated` (share cut off at maxNewTokens), over every multi-actor conversation of the step."""
    by_turn: dict[int, list[Any]] = {}
    episodes = 0
    for conv in conversations:
        speakers = set(roles_played_by(conv.env, actor))  # the actor's own name when the environment has no roles
        if not speakers:
            continue
        for episode in conv.episodes:
            episodes += 1
            for k, m in enumerate(episode.messages):
                if k < MAX_TURNS and m.actor in speakers and m.role == "assistant":
                    by_turn.setdefault(k, []).append(m)
    out: dict[str, float] = {}
    for k, messages in sorted(by_turn.items()):
        out[f"turns/{k}/share"] = len(messages) / episodes  # at most one message per turn index per episode
        out[f"turns/{k}/tokens"] = sum(len(m.ids) if m.ids else len(m.text) for m in messages) / len(messages)
        out[f"turns/{k}/truncated"] = sum(1 for m in messages if not m.ended) / len(messages)
    return out
