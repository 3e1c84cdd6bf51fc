"""The one learner interface of the training loop, and the registry that builds a run's learner by
`algorithm.name`.

A learner turns a step's scored episodes (or, for an offline learner, its own dataset rows) into updates of the
trainable actors. The on-policy learners (on_policy.py and its subclasses) do it in three phases the loop never
sees: `prepare` (what the whole step needs first: a centralised critic's values, a team's mixed values),
`advantages` (per actor), and `update` (per actor, in the learner's `order`); `save`/`load` carry whatever the
learner keeps across steps (critics, mixers, baselines, the HAPPO order's RNG) in a training checkpoint. A new
learner is a class registered here under its names, not a branch in the loop; learner.py builds a run's learner
from the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, cast

import torch

from ..launch.distributed import RankContext
from ..spec.runspec_types import RunSpec

Updates = dict[str, dict[str, float]]


@dataclass(frozen=True)
class LearnerSetup:
    """What any learner may need, built by the training loop before the first step. Learners read the typed
    RunSpec (`run`: its algorithm and trainer sections; each actor's own section is `Actor.section`); `spec` is
    the JSON document, kept for the parts that still read one (environments, models)."""

    spec: dict[str, Any]
    actors: dict[str, Any]
    environments: list[Any]
    residency: Any
    ctx: RankContext
    work_dir: Path
    log: Callable[[str, str], Any]
    report_memory: Callable[..., None]
    liger_cls: Any
    device: torch.device
    run: RunSpec = field(default=None)  # type: ignore[assignment]  # typed from `spec` when not given

    def __post_init__(self) -> None:
        if self.run is None:
            object.__setattr__(self, "run", RunSpec.from_dict(self.spec))


class Learner(Protocol):
    """What the training loop calls. `rolls_out` False: the learner trains on dataset rows (`step`), and the
    loop samples no episodes for it."""

    rolls_out: bool

    def learn(self, step: int, batch: Any) -> tuple[Updates, dict[str, list[Any]]]:
        """One step's updates from a batch of scored episodes: metrics per trained actor, and each one's shares."""
        ...

    def save(self, folder: Path) -> None:
        """The learner's own state into a training checkpoint's folder (the actors' weights are saved elsewhere)."""
        ...

    def load(self, folder: Path) -> None: ...


class RowLearner(Learner, Protocol):
    """A learner with `rolls_out` False (sft, dpo: learners/offline_loop.py): the loop calls `step` instead of
    sampling and `learn`, and at each evaluation reports its own held-out metrics (`evaluate`) besides the
    environments' (evaluation.py)."""

    def step(self, step: int) -> Updates:
        """One training step on the learner's own dataset rows: metrics per trained actor."""
        ...

    def evaluate(self) -> Updates:
        """Held-out metrics per trained actor (`eval/loss`, ...)."""
        ...


def row_learner(learner: Learner) -> RowLearner | None:
    """The learner as a `RowLearner` when it trains on dataset rows (`rolls_out` False), else None."""
    return None if learner.rolls_out else cast(RowLearner, learner)


LearnerFactory = Callable[[LearnerSetup], Learner]
LEARNERS: dict[str, LearnerFactory] = {}


def register_learner(*names: str) -> Callable[[LearnerFactory], LearnerFactory]:
    """Register a learner class (or factory) under `algorithm.name`s."""

    def add(factory: LearnerFactory) -> LearnerFactory:
        for name in names:
            LEARNERS[name] = factory
        return factory

    return add
