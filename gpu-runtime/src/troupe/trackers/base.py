"""The one interface of a tracker, and the set of them a run subscribes to its event writer.

A tracker must never fail a run: one that raises is reported once as a warning and then left out (the run
and the dashboard are the record; the mirror is a convenience)."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

TERMINAL = ("succeeded", "failed", "cancelled", "stopped")
MAX_TRANSCRIPT_ROWS = 10_000


def metric_key(name: str, actor: str | None) -> str:
    """`student/reward`: per-actor metrics apart, as the run page shows them; run-wide ones by their name."""
    return f"{actor}/{name}" if actor else name


def transcript_row(event: Mapping[str, Any]) -> dict[str, Any]:
    """One transcript as a flat table row: who said what, the reward and advantage."""
    messages = event.get("messages", [])
    prompt = "\n".join(m["content"] for m in messages if m["role"] in ("system", "user"))
    turns = [m for m in messages if m["role"] not in ("system", "user")]
    return {
        "step": int(event["step"]),
        "environment": event.get("environment", ""),
        "group": int(event.get("group", 0)),
        "sample": int(event.get("sample", 0)),
        "prompt": prompt,
        "conversation": "\n".join(f"[{m['actor']}] {m['content']}" for m in turns),
        "reward": float(event.get("reward", 0.0)),
        "advantage": float(event["advantage"]) if event.get("advantage") is not None else None,
    }


TRANSCRIPT_COLUMNS = ("step", "environment", "group", "sample", "prompt", "conversation", "reward", "advantage")


class Tracker(ABC):
    """Mirrors a run. `config` is its entry of `trainer.trackers`; files go under `work_dir`."""

    kind: str

    def __init__(self, config: Mapping[str, Any], spec: Mapping[str, Any], work_dir: Path):
        self.config = dict(config)
        self.spec = spec
        self.work_dir = work_dir

    @property
    def folder(self) -> Path:
        """The tracker's folder inside the run folder (the contract refuses absolute paths and `..`)."""
        return self.work_dir / self.config["dir"]

    @staticmethod
    def config_of(spec: Mapping[str, Any]) -> dict[str, Any]:
        return json.loads(json.dumps(spec))

    @abstractmethod
    def metrics(self, step: int, values: Mapping[str, float]) -> None: ...

    @abstractmethod
    def transcripts(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Rows of transcript_row, all recorded so far (a tracker may keep only the latest)."""

    @abstractmethod
    def close(self, state: str) -> None: ...


class TrackerSet:
    """An EventWriter listener fanning events out to trackers: metrics as they come, transcripts once per step
    (when a later step's first event arrives, and at the end), close on the terminal status."""

    def __init__(self, trackers: Sequence[Tracker], warn: Callable[[str], Any]):
        self.trackers = list(trackers)
        self.warn = warn
        self.rows: list[dict[str, Any]] = []
        self._pending = 0
        self._closed = False

    def __call__(self, event: Mapping[str, Any]) -> None:
        if self._closed:
            return
        kind = event.get("type")
        if kind == "metric":
            if self._pending and any(r["step"] < int(event["step"]) for r in self.rows[-self._pending :]):
                self._flush_transcripts()
            values = {metric_key(n, event.get("actor")): float(v) for n, v in event["values"].items()}
            self._each(lambda t: t.metrics(int(event["step"]), values))
        elif kind == "episode" and len(self.rows) < MAX_TRANSCRIPT_ROWS:
            self.rows.append(transcript_row(event))
            self._pending += 1
        elif kind == "status" and event.get("state") in TERMINAL:
            if self._pending:
                self._flush_transcripts()
            self._closed = True
            self._each(lambda t: t.close(str(event["state"])))

    def seen(self, event: Mapping[str, Any]) -> None:
        """The EventWatcher side (events.py): every event the run writes or relays."""
        self(event)

    def non_finite(self, step: int, actor: str | None, names: list[str]) -> None:
        """NaN/inf values never reach a tracker: the run's metric events drop them, and so do the mirrors."""

    def _flush_transcripts(self) -> None:
        self._pending = 0
        rows = list(self.rows)
        self._each(lambda t: t.transcripts(rows))

    def _each(self, call: Callable[[Tracker], Any]) -> None:
        for tracker in list(self.trackers):
            try:
                call(tracker)
            except Exception as e:  # noqa: BLE001 - a mirror must never fail the run
                self.trackers.remove(tracker)
                self.warn(f"tracker {tracker.kind} stopped mirroring this run: {type(e).__name__}: {e}")
