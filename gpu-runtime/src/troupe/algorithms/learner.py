"""Builds a run's learner by `algorithm.name` from the registry (learner_base.py, where the interface is). The
learner modules register themselves when imported; this module imports every one of them, so the registry is
whole wherever `build_learner` is reachable."""

from __future__ import annotations

from types import ModuleType

from . import on_policy
from .learner_base import LEARNERS, Learner, LearnerFactory, LearnerSetup, RowLearner, Updates, register_learner, row_learner
from .learners import cory, happo, offline_loop, value_decomposition

__all__ = ["LEARNERS", "Learner", "LearnerFactory", "LearnerSetup", "RowLearner", "Updates", "build_learner", "register_learner", "row_learner"]


def _import_learners() -> tuple[ModuleType, ...]:
    """The modules whose learners are registered (imported above)."""
    return on_policy, cory, happo, offline_loop, value_decomposition


def build_learner(setup: LearnerSetup) -> Learner:
    name = setup.run.algorithm.name
    if name not in LEARNERS:
        raise ValueError(f"algorithm.name: no learner is registered for {name!r} (registered: {', '.join(sorted(LEARNERS))})")
    return LEARNERS[name](setup)
