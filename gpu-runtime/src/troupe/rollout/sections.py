"""The run's `rollout` section chooses its rollout source by name: each key of the section that names a source kind
(`rollout.workers`: workers.py's pool) opens that source; a run without the section keeps the loop's choice
(synchronous, or a producer under `algorithm.async`). A new kind is one `register_rollout_section` line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..spec.runspec_types import Algorithm, Rollout
from .async_rollout import load_in_flight
from .source import RolloutSource, SamplingPlaces
from .placement import placement_of
from .workers import WorkerPoolSource, workers_ok


@dataclass(frozen=True)
class SourceSetup:
    """What a source of the `rollout` section is opened with (the loop's setup, once): its typed sections (the
    `rollout` section, the algorithm, the run's seed), and the run's JSON document for the processes that rebuild
    environments and rewards from it. Each actor carries its own device."""

    rollout: Rollout | None
    algorithm: Algorithm
    seed: int
    document: Mapping[str, Any]
    environments: list[Any]
    prompts_per_env: list[int]
    actors: dict[str, Any]
    rewards: dict[str, Any]
    places: SamplingPlaces
    work_dir: Path
    events: Any
    report_memory: Callable[[int, str], None]
    total_steps: int = 0  # trainer.steps (a source sampling ahead stops there)
    first_step: int = 1  # the step the run (re)starts at
    resume_from: Path | None = None  # the checkpoint folder a resumed run starts from (its batches in flight)


_SECTIONS: dict[str, Callable[[SourceSetup], RolloutSource]] = {}


def register_rollout_section(key: str, opener: Callable[[SourceSetup], RolloutSource]) -> None:
    _SECTIONS[key] = opener


def open_rollout_section(setup: SourceSetup) -> RolloutSource | None:
    """The source the spec's `rollout` section asks for, or None when it asks for none."""
    section = setup.rollout
    if section is None:
        return None
    chosen = [key for attr, key in Rollout.JSON_NAMES.items() if getattr(section, attr) is not None and key in _SECTIONS]
    return _SECTIONS[chosen[0]](setup) if chosen else None


def _open_workers(setup: SourceSetup) -> RolloutSource:
    assert setup.rollout is not None and setup.rollout.workers is not None  # chosen by its key
    placement = placement_of(setup.rollout.workers)
    why_not = workers_ok(setup.actors, setup.rewards, placement)
    if why_not is not None:
        raise ValueError(why_not)
    queued, _ = load_in_flight(setup.resume_from, setup.environments) if setup.resume_from is not None else ([], None)
    pool = WorkerPoolSource(
        setup.document, setup.rollout.workers, setup.algorithm, setup.seed, setup.environments, setup.prompts_per_env, setup.actors,
        setup.places, setup.work_dir, setup.events.log, setup.events.metric, setup.report_memory, placement,
        total_steps=setup.total_steps, first_step=setup.first_step, queued=queued,
    )
    setup.events.log("info", f"rollout workers: {pool.count} processes (pids {', '.join(map(str, pool.pids))}) sample; {pool.sync_words}")
    return pool


register_rollout_section("workers", _open_workers)
