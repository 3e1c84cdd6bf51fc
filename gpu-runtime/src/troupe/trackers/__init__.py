"""Mirrors of a run in the trackers researchers keep beside the dashboard (`trainer.trackers`): W&B and
TensorBoard. A tracker is an event listener: it sees every event the run writes (metrics, episodes, the
terminal status) and nothing else changes. One class per kind, registered by name in TRACKERS.

Trackers are opened by the process that writes the run's events (the runner's child, or the supervisor of
launched ranks, which relays rank 0's events), never inside a rank, so a 4-rank run mirrors once."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..events import EventWriter
from .base import Tracker, TrackerSet
from .rules import tracker_issues
from .tensorboard import TensorBoardTracker
from .wandb import WandbTracker

TRACKERS: dict[str, type[Tracker]] = {"tensorboard": TensorBoardTracker, "wandb": WandbTracker}


def attach_trackers(spec: Mapping[str, Any], events: EventWriter, work_dir: Path) -> TrackerSet | None:
    """Opens the spec's trackers under `work_dir` and subscribes them to `events`; None when it asks for none.
    They close themselves on the run's terminal status event."""
    configs = spec["trainer"].get("trackers") or []
    if not configs:
        return None
    trackers = [TRACKERS[c["kind"]](c, spec, Path(work_dir)) for c in configs]
    found = TrackerSet(trackers, warn=lambda message: events.log("warning", message))
    events.watch(found)
    return found


__all__ = ["TRACKERS", "Tracker", "TrackerSet", "attach_trackers", "tracker_issues"]
