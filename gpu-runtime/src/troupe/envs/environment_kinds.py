"""Every environment kind by name: the one place a kind is added (one `register_environment_kind` line).

    single_turn                          environments.py
    collaborative, adversarial, parallel collaborative.py (round spec)
    python, code, tools, game, remote    acting.py (an `Environment` object speaks between turns; acting_build.py)
    majority_vote, summary               majority_vote.py, summary.py (N actors answer, the outcome decides)

A builder takes the environment's typed section (`Environment` of the RunSpec), its index and the run's `BuildContext`, and returns an object that
implements the environment protocol (protocol.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .acting import ACTING_KINDS
from .acting_build import build_acting, sandbox_limits
from .collaborative import MULTI_ACTOR_KINDS, build_collaborative
from .data import Dataset, load_dataset
from .environments import build_environment
from .majority_vote import build_majority_vote
from .summary import build_summary
from .protocol import EnvironmentKind
from .sections import EnvironmentInput, environment_section
from ..spec.runspec_types import Environment as EnvironmentSection, RunSpec, Sandbox as SandboxSection


@dataclass(frozen=True)
class BuildContext:
    """What a builder may use besides its own section: the run's datasets and bound rewards, the row RNG every
    environment shares (in spec order, as the run draws), the run's `sandbox` section and the run folder."""

    datasets: Mapping[str, Dataset]
    rewards: Mapping[str, Any]
    rng: np.random.Generator
    sandbox: SandboxSection | None
    work_dir: Path


Builder = Callable[[EnvironmentSection, int, BuildContext], EnvironmentKind]
ENVIRONMENT_KINDS: dict[str, Builder] = {}


def register_environment_kind(name: str, builder: Builder) -> None:
    if name in ENVIRONMENT_KINDS:
        raise ValueError(f'environment kind "{name}" is registered twice')
    ENVIRONMENT_KINDS[name] = builder


def _single_turn(section: EnvironmentSection, index: int, ctx: BuildContext) -> EnvironmentKind:
    return build_environment(section, index, dict(ctx.datasets), dict(ctx.rewards), ctx.rng)


def _collaborative(section: EnvironmentSection, index: int, ctx: BuildContext) -> EnvironmentKind:
    return build_collaborative(section, index, dict(ctx.datasets), dict(ctx.rewards), ctx.rng)


def _acting(section: EnvironmentSection, index: int, ctx: BuildContext) -> EnvironmentKind:
    return build_acting(section, index, dict(ctx.datasets), dict(ctx.rewards), ctx.rng, ctx.work_dir, sandbox_limits(ctx.sandbox))


def _outcome(build: Callable[..., Any]) -> Builder:
    """majority_vote and summary: N actors answer, the outcome decides (majority_vote.py, summary.py)."""
    return lambda section, index, ctx: build(section, index, dict(ctx.datasets), dict(ctx.rewards), ctx.rng)


register_environment_kind("single_turn", _single_turn)
register_environment_kind("majority_vote", _outcome(build_majority_vote))
register_environment_kind("summary", _outcome(build_summary))
for _kind in MULTI_ACTOR_KINDS:
    register_environment_kind(_kind, _collaborative)
for _kind in ACTING_KINDS:
    register_environment_kind(_kind, _acting)


def build_any_environment(
    environment: EnvironmentInput,
    index: int,
    datasets: dict[str, Dataset],
    rewards: dict[str, Any],
    rng: np.random.Generator,
    run: RunSpec | Mapping[str, Any],
    work_dir: Path,
) -> EnvironmentKind:
    """The environment of its typed section (a document is read at the door, sections.py); `run`: the typed RunSpec
    (or its document), of which the builders get only the `sandbox` section."""
    kind = environment.kind if isinstance(environment, EnvironmentSection) else environment.get("kind", "single_turn")
    builder = ENVIRONMENT_KINDS.get(kind)
    if builder is None:  # the schema names the kinds; a kind the schema knows but no builder is a runtime gap
        raise ValueError(f'environments.{index}.kind: no builder for "{kind}" (known: {", ".join(sorted(ENVIRONMENT_KINDS))})')
    sandbox = run.sandbox if isinstance(run, RunSpec) else (SandboxSection.from_dict(run["sandbox"]) if run.get("sandbox") else None)
    return builder(environment_section(environment), index, BuildContext(datasets, rewards, rng, sandbox, work_dir))


def build_run_environments(run: RunSpec | Mapping[str, Any], work_dir: Path, rewards: dict[str, Any], only: list[bool] | None = None) -> list[Any]:
    """Every environment of the run, in order, on the run's datasets, sharing one row RNG as the run does
    (`only`: build just these, None in the other places; the producer process builds the ones it samples).
    `run`: the typed RunSpec (a document, as the producer processes hold it, is read once here); each environment
    gets its own section."""
    typed = run if isinstance(run, RunSpec) else RunSpec.from_dict(run)
    datasets = {d.name: load_dataset(d, i, typed.seed, work_dir) for i, d in enumerate(typed.datasets)}
    row_rng = np.random.default_rng(typed.seed)
    return [
        build_any_environment(e, i, datasets, rewards, row_rng, typed, work_dir) if only is None or only[i] else None
        for i, e in enumerate(typed.environments)
    ]
