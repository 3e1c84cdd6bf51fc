"""The spec's rewards, ready to score, by their source kind: builtins as they are, Python code in its sandboxed
worker, judges asking a frozen actor (judge.py); a reward passed in as a Python function (`library_rewards`)
goes in-process whatever its source. The loop binds them once per run; the producer process binds its own.

A new source kind is a binder registered here by name (`register_reward_source`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..events import EventWriter
from ..spec.runspec_types import Reward
from .builtin import bind_reward
from .judge import bind_judge_reward
from .python_rewards import PythonReward, bind_python_reward
from .reward_api import RewardFunction, bind_in_process


@dataclass(frozen=True)
class RewardBindContext:
    """What a binder may use besides the reward's own spec entry: the run folder (a Python reward's worker may
    read it), the run's `sandbox` settings and its event log."""

    work_dir: Path
    sandbox: Mapping[str, Any] | None
    events: EventWriter


RewardBinder = Callable[[Reward, int, RewardBindContext], Any]  # the reward's typed section, its index in `rewards`
REWARD_SOURCES: dict[str, RewardBinder] = {}


def register_reward_source(kind: str, binder: RewardBinder) -> None:
    if kind in REWARD_SOURCES:
        raise ValueError(f'reward source kind "{kind}" is registered twice')
    REWARD_SOURCES[kind] = binder


register_reward_source("builtin", lambda reward, index, ctx: bind_reward(reward))
register_reward_source("python", lambda reward, index, ctx: bind_python_reward(reward, ctx.work_dir, ctx.sandbox))
register_reward_source("judge", lambda reward, index, ctx: bind_judge_reward(reward, index))


def bind_rewards(spec: dict[str, Any], work_dir: Path, library_rewards: dict[str, RewardFunction], events: EventWriter) -> dict[str, Any]:
    """Each reward of the spec by name, ready to score. `spec` is the run's document (the loop and the producer
    process hold it); each reward is bound from its typed section, a library function from its entry as it is
    (reward_api.bind_in_process: absent settings fall back to the function's own)."""
    ctx = RewardBindContext(work_dir, spec.get("sandbox"), events)
    rewards: dict[str, Any] = {}
    for i, entry in enumerate(spec["rewards"]):
        name = entry["name"]
        if name in library_rewards:
            rewards[name] = bind_in_process(library_rewards[name], entry)
        else:
            rewards[name] = _binder(entry["source"]["kind"], i)(Reward.from_dict(entry), i, ctx)
    for reward in rewards.values():
        if isinstance(reward, PythonReward):  # code that can fail (workers, functions, judges): failures in the run's log
            reward.report = lambda message: events.log("error", message)
    return rewards


def _binder(kind: str, index: int) -> RewardBinder:
    """The binder of a source kind, asked before the entry is typed: a kind without one is named by its path."""
    if kind not in REWARD_SOURCES:  # the schema names the kinds: a kind it knows without a binder is a runtime gap
        raise ValueError(f'rewards.{index}.source.kind: no binder for "{kind}" (known: {", ".join(sorted(REWARD_SOURCES))})')
    return REWARD_SOURCES[kind]
