"""What stops the sampling side from being rebuilt in another process (the process producer, rollout workers).

Both copy the actors' modules into spawned CPU processes and rebuild the rewards there from the spec, so both
refuse the same things, which spec/ cannot see: an actor on a GPU (each actor carries its device), an actor that
samples with its own engine (vLLM: the engine lives in this process and is not copied), rewards passed in as
Python objects, and LoRA actors sharing one base module. Each caller words its own refusals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..rewards.reward_api import InProcessReward

if TYPE_CHECKING:
    from ..actors import Actor


@dataclass(frozen=True)
class CopyRefusals:
    """The caller's message for each thing a copy in another process cannot carry."""

    gpu: str
    in_process_rewards: str
    shared_base: str
    own_engine: str


def copy_blockers(actors: Mapping[str, "Actor"], rewards: Mapping[str, Any], refusals: CopyRefusals, on_cpu: bool = True) -> str | None:
    """None when the actors and rewards can be rebuilt in another process; else the first refusal that applies.
    `on_cpu`: the copy is a CPU process, so an actor on a GPU is refused (GPU rollout workers check their devices
    themselves, workers.py, and pass False)."""
    if on_cpu and any(a.device.type != "cpu" for a in actors.values()):
        return refusals.gpu
    if any(a.engine is not None and a.engine.holds_own_weights for a in actors.values()):
        return refusals.own_engine
    if any(isinstance(r, InProcessReward) for r in rewards.values()):
        return refusals.in_process_rewards
    if any(a.shares_base for a in actors.values()):
        return refusals.shared_base
    return None
