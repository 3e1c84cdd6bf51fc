"""Every environment kind by name: the one place a kind is added (one `register_environment_kind` line).

    single_turn                          environments.py
    collaborative, adversarial, parallel collaborative.py (round spec)
    python, code, tools, game, remote    acting.py (an `Environment` object speaks between turns; acting_build.py)
    majority_vote, summary               majority_vote.py, summary.py (N actors answer, the outcome decides)

A builder takes the environment's spec section, its index and the run's `BuildContext`, and returns an object that
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


@dataclass(frozen=True)
class BuildContext:
    """What a builder may use besides its own section: the run's datasets and bound rewards, the row RNG every
    environment shares (in spec order, as the run draws), the whole spec (run-wide settings such as `sandbox`)
    and the run folder."""

    datasets: Mapping[str, Dataset]
    rewards: Mapping[str, Any]
    rng: np.random.Generator
    spec: Mapping[str, Any]
    work_dir: Path


Builder = Callable[[dict[str, Any], int, BuildContext], EnvironmentKind]
ENVIRONMENT_KINDS: dict[str, Builder] = {}


def register_environment_kind(name: str, builder: Builder) -> None:
    if name in ENVIRONMENT_KINDS:
        raise ValueError(f'environment kind "{name}" is registered twice')
    ENVIRONMENT_KINDS[name] = builder


def _single_turn(env_spec: dict[str, Any], index: int, ctx: BuildContext) -> EnvironmentKind:
    return build_environment(env_spec, index, dict(ctx.datasets), dict(ctx.rewards), ctx.rng)


def _collaborative(env_spec: dict[str, Any], index: int, ctx: BuildContext) -> EnvironmentKind:
    return build_collaborative(env_spec, index, dict(ctx.datasets), dict(ctx.rewards), ctx.rng)


def _acting(env_spec: dict[str, Any], index: int, ctx: BuildContext) -> EnvironmentKind:
    return build_acting(env_spec, index, dict(ctx.datasets), dict(ctx.rewards), ctx.rng, ctx.work_dir, sandbox_limits(dict(ctx.spec)))


def _outcome(build: Callable[..., Any]) -> Builder:
    """majority_vote and summary: N actors answer, the outcome decides (majority_vote.py, summary.py)."""
    return lambda env_spec, index, ctx: build(env_spec, index, dict(ctx.datasets), dict(ctx.rewards), ctx.rng)


register_environment_kind("single_turn", _single_turn)
register_environment_kind("majority_vote", _outcome(build_majority_vote))
register_environment_kind("summary", _outcome(build_summary))
for _kind in MULTI_ACTOR_KINDS:
    register_environment_kind(_kind, _collaborative)
for _kind in ACTING_KINDS:
    register_environment_kind(_kind, _acting)


def build_any_environment(
    env_spec: dict[str, Any], index: int, datasets: dict[str, Dataset], rewards: dict[str, Any], rng: np.random.Generator, spec: dict[str, Any], work_dir: Path
) -> EnvironmentKind:
    builder = ENVIRONMENT_KINDS.get(env_spec["kind"])
    if builder is None:  # the schema names the kinds; a kind the schema knows but no builder is a runtime gap
        raise ValueError(f'environments.{index}.kind: no builder for "{env_spec["kind"]}" (known: {", ".join(sorted(ENVIRONMENT_KINDS))})')
    return builder(env_spec, index, BuildContext(datasets, rewards, rng, spec, work_dir))


def build_run_environments(spec: dict[str, Any], work_dir: Path, rewards: dict[str, Any], only: list[bool] | None = None) -> list[Any]:
    """Every environment of the spec, in order, on the run's datasets, sharing one row RNG as the run does
    (`only`: build just these, None in the other places; the producer process builds the ones it samples)."""
    datasets = {d["name"]: load_dataset(d, i, spec["seed"], work_dir) for i, d in enumerate(spec["datasets"])}
    row_rng = np.random.default_rng(spec["seed"])
    return [
        build_any_environment(e, i, datasets, rewards, row_rng, spec, work_dir) if only is None or only[i] else None
        for i, e in enumerate(spec["environments"])
    ]
