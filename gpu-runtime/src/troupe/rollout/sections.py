"""The run's `rollout` section chooses its rollout source by name: each key of the section that names a source kind
(`rollout.workers`: workers.py's pool) opens that source; a run without the section keeps the loop's choice
(synchronous, or a producer under `algorithm.async`). A new kind is one `register_rollout_section` line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from .source import RolloutSource, SamplingPlaces
from .workers import WorkerPoolSource, workers_ok


@dataclass(frozen=True)
class SourceSetup:
    """What a source of the `rollout` section is opened with (the loop's setup, once)."""

    spec: dict[str, Any]
    environments: list[Any]
    prompts_per_env: list[int]
    actors: dict[str, Any]
    rewards: dict[str, Any]
    device: torch.device
    places: SamplingPlaces
    work_dir: Path
    events: Any
    report_memory: Callable[[int, str], None]


_SECTIONS: dict[str, Callable[[SourceSetup], RolloutSource]] = {}


def register_rollout_section(key: str, opener: Callable[[SourceSetup], RolloutSource]) -> None:
    _SECTIONS[key] = opener


def open_rollout_section(setup: SourceSetup) -> RolloutSource | None:
    """The source the spec's `rollout` section asks for, or None when it asks for none."""
    section = setup.spec.get("rollout") or {}
    chosen = [key for key in section if section[key] is not None and key in _SECTIONS]
    return _SECTIONS[chosen[0]](setup) if chosen else None


def _open_workers(setup: SourceSetup) -> RolloutSource:
    why_not = workers_ok(setup.spec, setup.actors, setup.rewards, setup.device)
    if why_not is not None:
        raise ValueError(why_not)
    pool = WorkerPoolSource(
        setup.spec, setup.environments, setup.prompts_per_env, setup.actors, setup.places, setup.work_dir, setup.events.log, setup.events.metric, setup.report_memory
    )
    setup.events.log("info", f"rollout workers: {pool.count} processes (pids {', '.join(map(str, pool.pids))}) sample; weights broadcast over gloo after every update")
    return pool


register_rollout_section("workers", _open_workers)
