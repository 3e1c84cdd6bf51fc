"""Troupe as a library, in the shapes the Actors library made familiar: actors, environments, rewards as
objects that compile to a RunSpec (`.to_spec()`), run here (`train`), or load back from one (`from_spec`).

    from troupe import Actor, TrainCfg, CollaborativeEnvironment, conversation_reward_function, train

    bob = Actor(name="Bob", model="tiny:tiny-char-2l", training=TrainCfg(learning_rate=3e-3))
    alice = Actor(name="Alice", model="tiny:tiny-char-2l", training=TrainCfg(learning_rate=3e-3))

    @conversation_reward_function(name="agree", weight=1.0)
    def agree(conversation, actor_name, answer):
        return float(answer in conversation[-1]["content"])

    env = CollaborativeEnvironment(actors=[bob, alice], round_spec="Bob -> Alice -> (Bob/Alice)*2",
                                   reward_functions=[agree], train_data=rows)
    result = train(env, steps=50)         # or: json.dump(env.to_spec(steps=50), f) and `troupe run spec.json`
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from ..events import EventWriter
from ..run import RunResult, run_spec
from .actors import Actor, OpenAIActor, TrainCfg
from .data import Data
from .environments import (
    AdversarialEnvironment,
    CodeEnvironment,
    CollaborativeActorConfig,
    CollaborativeEnvironment,
    CombinedEnvironment,
    GameEnvironment,
    ParallelEnvironment,
    PythonEnvironment,
    RemoteEnvironment,
    SingleTurnEnvironment,
    ToolsEnvironment,
    TrainingEnvironment,
    from_spec,
    to_spec,
)
from .rewards import Builtin, PythonReward, conversation_reward_function, reward_function


def _combined(env: TrainingEnvironment | CombinedEnvironment) -> CombinedEnvironment:
    return env if isinstance(env, CombinedEnvironment) else CombinedEnvironment([env])


def train(
    env: TrainingEnvironment | CombinedEnvironment,
    steps: int = 100,
    *,
    work_dir: str | Path | None = None,
    events: EventWriter | None = None,
    **settings: Any,
) -> RunResult:
    """Runs the environment's RunSpec here: rows held in memory are written under `work_dir` (a new temporary
    folder when absent), decorated rewards run in this process (they may close over anything). `settings`:
    `name`, `algorithm`, `group_size`, `prompts_per_step`, `seed`, `trainer` (a RunSpec trainer dict)."""
    combined = _combined(env)
    spec = combined.to_spec(steps=steps, **settings)
    folder = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="troupe-run-"))
    folder.mkdir(parents=True, exist_ok=True)
    for data in combined.data():
        data.materialize(folder)
    return run_spec(spec, events=events, work_dir=folder, rewards=combined.reward_functions())


def save_spec(env: TrainingEnvironment | CombinedEnvironment, path: str | Path, **settings: Any) -> dict[str, Any]:
    """Writes the RunSpec (JSON, or YAML for .yaml/.yml) and any in-memory rows beside it, so the folder is
    what `python -m troupe run` or the dashboard's `troupe run` needs."""
    combined = _combined(env)
    spec = combined.to_spec(**settings)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix.lower() in (".yaml", ".yml"):
        import yaml

        target.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")
    else:
        target.write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for data in combined.data():
        data.materialize(target.parent)
    return spec


__all__ = [
    "Actor",
    "AdversarialEnvironment",
    "Builtin",
    "CodeEnvironment",
    "CollaborativeActorConfig",
    "CollaborativeEnvironment",
    "CombinedEnvironment",
    "Data",
    "GameEnvironment",
    "OpenAIActor",
    "ParallelEnvironment",
    "PythonEnvironment",
    "PythonReward",
    "RemoteEnvironment",
    "SingleTurnEnvironment",
    "ToolsEnvironment",
    "TrainCfg",
    "TrainingEnvironment",
    "conversation_reward_function",
    "from_spec",
    "reward_function",
    "save_spec",
    "to_spec",
    "train",
]
