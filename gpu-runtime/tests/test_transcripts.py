"""Transcripts out: `trainer.episodesPerStep` records whole GRPO groups (every sample of each)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from troupe.events import EventWriter
from troupe.reporting.transcripts import emit_episodes


def single_turn_part(env: str, groups: int, group_size: int, rewards: list[float]) -> SimpleNamespace:
    """A stand-in for one environment's EnvRollout: `groups` prompts, `group_size` completions each."""
    n = groups * group_size
    return SimpleNamespace(
        env=SimpleNamespace(name=env, actor="student", dataset=SimpleNamespace(name="letters")),
        row_indices=[10 * (g + 1) for g in range(groups)],
        prompts=[SimpleNamespace(system=None, user=f"{env} prompt {g}") for g in range(groups)],
        rollout=SimpleNamespace(texts=[f"{env} completion {k}" for k in range(n)]),
        rewards=rewards,
        components=[{"match": r} for r in rewards],
        advantages=[r - 0.5 for r in rewards],
    )


def conversation_part(env: str, groups: int, group_size: int) -> SimpleNamespace:
    """A stand-in for a collaborative environment's ConversationPart (episodes listed sample-major on purpose)."""
    episodes = [
        SimpleNamespace(
            group=g, sample=s, row_index=g, user=f"topic {g}", systems={},
            messages=[SimpleNamespace(actor="alice", role="assistant", text=f"a{g}{s}"), SimpleNamespace(actor="bob", role="assistant", text=f"b{g}{s}")],
            rewards={"alice": float(s)}, components={"alice": {"score": float(s)}}, advantages={"alice": float(s) - 0.5},
        )
        for s in range(group_size) for g in range(groups)
    ]
    env_ = SimpleNamespace(name=env, actors=["alice", "bob"], dataset=SimpleNamespace(name="topics"))
    return SimpleNamespace(env=env_, row_indices=list(range(groups)), episodes=episodes)


def emitted(parts, conversations, group_size: int, limit: int) -> list[dict]:
    w = EventWriter(keep=True)
    emit_episodes(w, 3, parts, conversations, {"student", "alice"}, group_size, limit)
    return w.events


@pytest.mark.parametrize(("limit", "groups"), [(0, 0), (1, 1), (4, 1), (5, 2), (8, 2), (9, 3), (100, 3)])
def test_episodes_per_step_counts_samples_rounded_up_to_whole_groups(limit: int, groups: int):
    events = emitted([single_turn_part("echo", 3, 4, [1.0] * 12)], [], 4, limit)
    assert len(events) == 4 * groups
    # Group by group, every sample of each, in order.
    assert [(e["group"], e["sample"]) for e in events] == [(g, s) for g in range(groups) for s in range(4)]


def test_a_group_s_samples_share_its_prompt_and_carry_reward_and_advantage(events_validator):
    rewards = [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    events = emitted([single_turn_part("echo", 2, 4, rewards)], [], 4, 8)
    for e in events:
        assert not list(events_validator.iter_errors(e))
    assert [e["reward"] for e in events] == rewards
    assert [e["advantage"] for e in events] == [r - 0.5 for r in rewards]
    for g in (0, 1):
        group = [e for e in events if e["group"] == g]
        assert {e["datasetRow"] for e in group} == {10 * (g + 1)}
        assert {e["messages"][0]["content"] for e in group} == {f"echo prompt {g}"}
        assert [e["messages"][1]["content"] for e in group] == [f"echo completion {4 * g + s}" for s in range(4)]
    # The prompt is the dataset's (its source), labelled by role.
    assert events[0]["messages"][0] == {"actor": "letters", "role": "user", "content": "echo prompt 0", "trained": False}


def test_groups_are_taken_round_robin_across_environments_and_conversations():
    parts = [single_turn_part("echo", 2, 2, [1.0] * 4), single_turn_part("reverse", 2, 2, [0.0] * 4)]
    events = emitted(parts, [conversation_part("chat", 2, 3)], 2, 6)
    # Group 0 of each environment (2 + 2 + 3 samples >= 6), whole: the conversation's 3 samples too.
    assert [(e["environment"], e["group"], e["sample"]) for e in events] == [
        ("echo", 0, 0), ("echo", 0, 1), ("reverse", 0, 0), ("reverse", 0, 1), ("chat", 0, 0), ("chat", 0, 1), ("chat", 0, 2),
    ]
    chat = [e for e in events if e["environment"] == "chat"]
    assert [e["reward"] for e in chat] == [0.0, 1.0, 2.0]
    assert [e["advantage"] for e in chat] == [-0.5, 0.5, 1.5]
    assert chat[0]["messages"][0]["role"] == "user" and chat[0]["messages"][0]["actor"] == "topics"


def test_each_turn_carries_its_index_and_its_speakers_reward_and_advantage(events_validator):
    """Agents x turns (issue 31): a conversation's turns are numbered in order, each with its speaker's
    reward and advantage (the other actor, untrained here, has none); a single-turn answer is turn 0."""
    events = emitted([single_turn_part("echo", 1, 2, [1.0, 0.0])], [conversation_part("chat", 1, 2)], 2, 4)
    for e in events:
        assert not list(events_validator.iter_errors(e))
    echo = [e for e in events if e["environment"] == "echo"]
    assert [(m["turn"], m["reward"], m["advantage"]) for e in echo for m in e["messages"] if m["role"] == "assistant"] == [(0, 1.0, 0.5), (0, 0.0, -0.5)]
    chat = [e for e in events if e["environment"] == "chat"][1]
    turns = [m for m in chat["messages"] if m["role"] == "assistant"]
    assert [(m["actor"], m["turn"], m.get("reward"), m.get("advantage")) for m in turns] == [("alice", 0, 1.0, 0.5), ("bob", 1, None, None)]
