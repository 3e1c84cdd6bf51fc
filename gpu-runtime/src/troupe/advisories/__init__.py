"""Health advisories: what a researcher would miss while a run trains (collapse, zero-variance groups,
entropy collapse, length explosion, truncation, KL blow-up, reward hacking, NaN/inf, staleness, a stalled
actor), computed per actor and per step from the run's own events, each with its evidence and a hint.

Seams: one detector class per kind, registered by name (registry.py, detectors/); the `Advisor`
(monitor.py) watches an `EventWriter` and the training loop calls `advisor.report(events, step)`.
"""

from .monitor import Advisor, episode_views
from .registry import DETECTORS, Detector, register
from .types import AdvisorySettings, EpisodeView, Finding, StepRecord

__all__ = ["Advisor", "AdvisorySettings", "DETECTORS", "Detector", "EpisodeView", "Finding", "StepRecord", "episode_views", "register"]
