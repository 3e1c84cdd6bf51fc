"""Detectors registered by name: one class per advisory kind (the contracts' `ADVISORY_KINDS`)."""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, TypeVar

from .types import AdvisorySettings, Finding, StepRecord


class Detector(Protocol):
    """A pure check over one actor's recent steps (oldest first, the current step last)."""

    kind: str

    def check(self, history: Sequence[StepRecord], settings: AdvisorySettings) -> Finding | None: ...


DETECTORS: dict[str, Detector] = {}
D = TypeVar("D")


def register(kind: str) -> Callable[[type[D]], type[D]]:
    def add(cls: type[D]) -> type[D]:
        if kind in DETECTORS:
            raise ValueError(f"advisory detector {kind!r} registered twice")
        instance = cls()
        setattr(instance, "kind", kind)
        DETECTORS[kind] = instance  # type: ignore[assignment]
        return cls

    return add
