"""The advisor: watches a run's own events (metrics, episodes, NaN/inf drops), keeps each actor's recent
steps, and at the end of every step runs the registered detectors and emits an `advisory` event for
each condition that starts (one per condition, not one per step while it lasts; again if it has been
clear for a whole window and comes back).

It reads only what the run reports, so what an advisory cites (steps, transcripts) is what a reader can
open: the transcripts are the recorded ones (`trainer.episodesPerStep`), not every sample.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any, Iterable

from ..events import EventWriter
from . import detectors as _detectors  # noqa: F401  (registers them)
from ..algorithms.names import OFFLINE_FAMILY
from ..spec.runspec_types import RunSpec
from .registry import DETECTORS, Detector, Learner, detectors_for
from .types import AdvisorySettings, EpisodeView, StepRecord

#: Records kept per actor after the baseline: enough for every window and the evaluations reward
#: hacking compares (episodes are dropped from older records; their metrics stay).
_KEEP_EPISODES = 3


class Advisor:
    def __init__(self, settings: AdvisorySettings | None = None, detectors: Iterable[str] | None = None):
        self.settings = settings or AdvisorySettings()
        names = list(DETECTORS) if detectors is None else list(detectors)
        unknown = [n for n in names if n not in DETECTORS]
        if unknown:
            raise ValueError(f"unknown advisory detector(s): {', '.join(unknown)}; known: {', '.join(DETECTORS)}")
        self.detectors: list[Detector] = [DETECTORS[n] for n in names]
        self.history: dict[str, list[StepRecord]] = defaultdict(list)
        self._metrics: dict[str, dict[int, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
        self._non_finite: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        self._episodes: dict[str, dict[int, list[EpisodeView]]] = defaultdict(lambda: defaultdict(list))
        self._active: set[tuple[str, str]] = set()
        self._quiet: dict[tuple[str, str], int] = defaultdict(int)
        #: Detectors that raised, with the error: switched off for the rest of the run (reported once).
        self.failed: dict[str, str] = {}

    @classmethod
    def for_run(cls, run: RunSpec) -> "Advisor":
        """The run's thresholds (`trainer.advisories`, defaults where absent) and its learner's detectors."""
        learner: Learner = "offline" if run.algorithm.name in OFFLINE_FAMILY else "rollout"
        return cls(AdvisorySettings.for_run(run), detectors_for(learner))

    # ---------------------------------------------------------------- EventWatcher

    def seen(self, event: dict[str, Any]) -> None:
        if event["type"] == "metric" and event.get("actor"):
            self._metrics[event["actor"]][event["step"]].update(event["values"])
        elif event["type"] == "episode":
            for actor, view in episode_views(event).items():
                self._episodes[actor][event["step"]].append(view)

    def non_finite(self, step: int, actor: str | None, names: list[str]) -> None:
        if actor:
            self._non_finite[actor][step].update(names)

    # ---------------------------------------------------------------- per step

    def close_step(self, step: int) -> list[tuple[str, str, Any]]:
        """Fold this step's events into each actor's history and run the detectors: the new findings as
        (actor, kind, Finding)."""
        found = []
        for actor in sorted(set(self._metrics) | set(self._episodes) | set(self._non_finite)):
            metrics = self._metrics[actor].pop(step, {})
            episodes = self._episodes[actor].pop(step, [])
            bad = self._non_finite[actor].pop(step, set())
            if not (metrics or episodes or bad):
                continue
            history = self.history[actor]
            history.append(StepRecord(step, dict(metrics), tuple(sorted(bad)), tuple(episodes)))
            self._trim(history)
            for detector in self.detectors:
                if detector.kind in self.failed:
                    continue
                try:
                    finding = detector.check(history, self.settings)
                except Exception as e:  # a health check must never end the training it watches
                    self.failed[detector.kind] = f"{type(e).__name__}: {e}"
                    continue
                key = (actor, detector.kind)
                if finding is None:
                    # Hysteresis: a condition ends after a whole window without it, so one that flickers
                    # around its threshold is reported once.
                    self._quiet[key] += 1
                    if self._quiet[key] >= self.settings.window:
                        self._active.discard(key)
                    continue
                self._quiet[key] = 0
                if key not in self._active:
                    self._active.add(key)
                    found.append((actor, detector.kind, finding))
        return found

    def report(self, events: EventWriter, step: int) -> None:
        """The training loop's hook: close the step and emit what started at it."""
        if not self.settings.enabled:
            return
        already = set(self.failed)
        found = self.close_step(step)
        for kind in sorted(set(self.failed) - already):
            events.log("warning", f"health advisory {kind!r} failed at step {step} and is off for the rest of the run: {self.failed[kind]}")
        for actor, kind, finding in found:
            events.advisory(step=step, kind=kind, severity=finding.severity, evidence=finding.evidence(), hint=finding.hint, actor=actor)

    def _trim(self, history: list[StepRecord]) -> None:
        # The baseline (first window) and the last few windows keep their transcripts; older records keep metrics only.
        w = self.settings.window
        cut = len(history) - _KEEP_EPISODES * w - 1
        if cut >= w and history[cut].episodes:
            history[cut] = dataclasses.replace(history[cut], episodes=())


def episode_views(event: dict[str, Any]) -> dict[str, EpisodeView]:
    """Each trained actor's part of an `episode` event: its own completions in it."""
    said: dict[str, list[str]] = defaultdict(list)
    own_reward: dict[str, float] = {}
    prompt = next((m["content"] for m in event["messages"] if m["role"] == "user"), "")
    for m in event["messages"]:
        if m["role"] == "assistant" and m["trained"]:
            said[m["actor"]].append(m["content"])
            if "reward" in m:  # the speaker's own reward (several trained actors: the episode's is their mean)
                own_reward[m["actor"]] = float(m["reward"])
    return {
        actor: EpisodeView(
            step=event["step"], environment=event["environment"], group=event["group"], sample=event["sample"],
            reward=own_reward.get(actor, float(event["reward"])), datasetRow=event.get("datasetRow"), completions=tuple(texts), prompt=prompt,
        )
        for actor, texts in said.items()
    }
