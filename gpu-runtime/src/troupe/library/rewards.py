"""Rewards as the Actors library writes them, on Troupe's reward contract (reward_api.py):

    @reward_function(name="short", weight=0.5)
    def short(prompt, completion, answer):           # dataset columns are filled in by name
        ...

    @conversation_reward_function(name="agreed", batched=True)
    def agreed(conversation, actor_name, answer):    # batched: lists in, a list out
        ...

plus `Builtin("letter_match", field="letter")` for the built-in rewards, and `PythonReward` for a RunSpec's
Python reward read back into objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..rewards.reward_api import RewardFunction, reward


def reward_function(fn: Callable[..., Any] | None = None, *, name: str | None = None, weight: float = 1.0, batched: bool = False, **settings: Any) -> Any:
    """A completion-scope reward: `(prompt, completion, **dataset columns)`."""
    return reward(fn, name=name, scope="completion", weight=weight, batched=batched, **settings)


def conversation_reward_function(fn: Callable[..., Any] | None = None, *, name: str | None = None, weight: float = 1.0, batched: bool = False, **settings: Any) -> Any:
    """A conversation-scope reward: `(conversation, actor_name, **dataset columns)`; with a parameter named
    `actors`, it gets the run's frozen actors to judge with (`actors["Judge"].generate(prompt)`)."""
    return reward(fn, name=name, scope="conversation", weight=weight, batched=batched, **settings)


@dataclass(frozen=True)
class Builtin:
    """A built-in reward (`letter_match`, `exact_match`, `math_answer`, ...) with its params."""

    reward: str
    name: str | None = None
    weight: float = 1.0
    scope: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, reward: str, name: str | None = None, weight: float = 1.0, scope: str | None = None, **params: Any):
        object.__setattr__(self, "reward", reward)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "weight", float(weight))
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "params", dict(params))

    @property
    def spec_name(self) -> str:
        return self.name or self.reward

    def spec_entry(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.spec_name, "source": {"kind": "builtin", "name": self.reward, "params": dict(self.params)}}
        if self.scope:
            out["scope"] = self.scope
        return out


@dataclass(frozen=True)
class PythonReward:
    """A RunSpec's reward entry kept as it is (Python code run in the sandbox, a built-in, a judge), as read back
    by `from_spec`, so `to_spec` writes it back unchanged."""

    entry: Mapping[str, Any]
    weight: float = 1.0

    @property
    def spec_name(self) -> str:
        return str(self.entry["name"])

    def spec_entry(self) -> dict[str, Any]:
        return dict(self.entry)


AnyReward = RewardFunction | Builtin | PythonReward


def reward_name(r: AnyReward) -> str:
    return r.name if isinstance(r, RewardFunction) else r.spec_name


def reward_entry(r: AnyReward) -> dict[str, Any]:
    return r.spec_entry()


def as_reward(value: Any) -> AnyReward:
    if isinstance(value, (RewardFunction, Builtin, PythonReward)):
        return value
    if isinstance(value, str):
        return Builtin(value)
    raise TypeError(f"a reward is a @reward_function/@conversation_reward_function, a Builtin(...) or a built-in's name, got {type(value).__name__}")
