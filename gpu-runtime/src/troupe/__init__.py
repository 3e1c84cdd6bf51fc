"""Troupe runtime: multi-agent RL for LLMs driven by a RunSpec, reporting JSON-line events.

    from troupe import run_spec
    result = run_spec("spec.json")          # or a dict; events kept in result.events
    print(result.state, result.metrics("reward/mean"))

Importing `troupe` is light (no torch); the training loop imports torch/transformers when a run starts.
"""

from ._compat import install as _install_compat
from .envs.environment_api import Environment, Reply
from .envs.environment_generate import GenerateBatch, Generation, Sample
from .events import EventWriter
from .rewards.reward_api import RewardFunction, reward
from .run import EXIT_CANCELLED, EXIT_FAILED, EXIT_SPEC, EXIT_SUCCEEDED, RunResult, StopRequest, run_spec
from .spec import FieldIssue, SpecError, check_supported, load_spec, validate_spec
from .library import (
    Actor,
    Builtin,
    CollaborativeActorConfig,
    CollaborativeEnvironment,
    Data,
    OpenAIActor,
    PythonEnvironment,
    SingleTurnEnvironment,
    TrainCfg,
    conversation_reward_function,
    from_spec,
    reward_function,
    save_spec,
    train,
)

_install_compat()  # compat: the import paths the README documented before the folders (_compat.py)

__version__ = "0.1.0"

__all__ = [
    "Actor",
    "Builtin",
    "CollaborativeActorConfig",
    "CollaborativeEnvironment",
    "Data",
    "OpenAIActor",
    "PythonEnvironment",
    "SingleTurnEnvironment",
    "TrainCfg",
    "conversation_reward_function",
    "from_spec",
    "reward_function",
    "save_spec",
    "train",
    "EXIT_CANCELLED",
    "EXIT_FAILED",
    "EXIT_SPEC",
    "EXIT_SUCCEEDED",
    "Environment",
    "EventWriter",
    "FieldIssue",
    "GenerateBatch",
    "Generation",
    "Reply",
    "Sample",
    "RewardFunction",
    "RunResult",
    "SpecError",
    "StopRequest",
    "check_supported",
    "load_spec",
    "reward",
    "run_spec",
    "validate_spec",
]
