"""Detectors registered by name: one class per advisory kind (the contracts' `ADVISORY_KINDS`).

Each says which learners it watches: `rollout` (the GRPO and PPO families, which sample and score
transcripts) and/or `offline` (sft, dpo: batches from a dataset). A policy loss that does not fall means
nothing in GRPO, and collapse needs transcripts an offline run never samples, so a run gets only the
detectors of its own learner (`Advisor.for_run`).
"""

from __future__ import annotations

from typing import Callable, Literal, Protocol, Sequence, TypeVar

from .types import AdvisorySettings, Finding, StepRecord

Learner = Literal["rollout", "offline"]
LEARNERS: tuple[Learner, ...] = ("rollout", "offline")


class Detector(Protocol):
    """A pure check over one actor's recent steps (oldest first, the current step last)."""

    kind: str
    learners: tuple[Learner, ...]

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None: ...


DETECTORS: dict[str, Detector] = {}
D = TypeVar("D")


def register(kind: str, learners: tuple[Learner, ...] = ("rollout",)) -> Callable[[type[D]], type[D]]:
    def add(cls: type[D]) -> type[D]:
        if kind in DETECTORS:
            raise ValueError(f"advisory detector {kind!r} registered twice")
        unknown = set(learners) - set(LEARNERS)
        if not learners or unknown:
            raise ValueError(f"advisory detector {kind!r}: learners must be some of {LEARNERS}, got {learners}")
        instance = cls()
        setattr(instance, "kind", kind)
        setattr(instance, "learners", tuple(learners))
        DETECTORS[kind] = instance  # type: ignore[assignment]
        return cls

    return add


def detectors_for(learner: Learner) -> list[str]:
    """The names of the detectors that watch this learner's runs, in registration order."""
    return [name for name, d in DETECTORS.items() if learner in d.learners]
