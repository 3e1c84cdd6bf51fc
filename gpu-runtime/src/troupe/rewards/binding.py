"""The spec's rewards, ready to score: library functions in-process, Python code in its sandboxed worker,
builtins as they are, judges asking a frozen actor (judge.py). The loop binds them once per run; the producer process binds its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..events import EventWriter
from .builtin import bind_reward
from .judge import bind_judge_reward
from .python_rewards import PythonReward, bind_python_reward
from .reward_api import RewardFunction, bind_in_process

def bind_rewards(spec: dict[str, Any], work_dir: Path, library_rewards: dict[str, RewardFunction], events: EventWriter) -> dict[str, Any]:
    """Each reward of the spec, ready to score: library functions in-process, Python code in its sandboxed
    worker (which can read the run folder), builtins as they are."""
    rewards: dict[str, Any] = {
        r["name"]: bind_in_process(library_rewards[r["name"]], r)
        if r["name"] in library_rewards
        else bind_python_reward(r, work_dir, spec.get("sandbox")) if r["source"]["kind"] == "python"
        else bind_judge_reward(r, i) if r["source"]["kind"] == "judge" else bind_reward(r)
        for i, r in enumerate(spec["rewards"])
    }
    for reward in rewards.values():
        if isinstance(reward, PythonReward):
            reward.report = lambda message: events.log("error", message)
    return rewards
