"""Which module builds each environment kind: the one dispatch point (add a kind here).

    single_turn                          environments.py
    collaborative, adversarial, parallel collaborative.py (round spec)
    python, code, tools                  acting.py (an `Environment` object speaks between turns)
    majority_vote, summary               majority_vote.py, summary.py (N actors answer, the outcome decides)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from .acting import ACTING_KINDS
from .collaborative import MULTI_ACTOR_KINDS, build_collaborative
from .data import Dataset, load_dataset
from .environments import build_environment
from .majority_vote import build_majority_vote
from .summary import build_summary

# Kinds built by one function each (kind -> builder(env_spec, index, datasets, rewards, rng)).
BUILDERS: dict[str, Callable[..., Any]] = {
    "majority_vote": build_majority_vote,
    "summary": build_summary,
}


def build_any_environment(
    env_spec: dict[str, Any], index: int, datasets: dict[str, Dataset], rewards: dict[str, Any], rng: np.random.Generator, spec: dict[str, Any], work_dir: Path
) -> Any:
    kind = env_spec["kind"]
    if kind in BUILDERS:
        return BUILDERS[kind](env_spec, index, datasets, rewards, rng)
    if kind in MULTI_ACTOR_KINDS:
        return build_collaborative(env_spec, index, datasets, rewards, rng)
    if kind in ACTING_KINDS:
        from .acting_build import build_acting, sandbox_limits

        return build_acting(env_spec, index, datasets, rewards, rng, work_dir, sandbox_limits(spec))
    return build_environment(env_spec, index, datasets, rewards, rng)


def build_run_environments(spec: dict[str, Any], work_dir: Path, rewards: dict[str, Any], only: list[bool] | None = None) -> list[Any]:
    """Every environment of the spec, in order, on the run's datasets, sharing one row RNG as the run does
    (`only`: build just these, None in the other places; the producer process builds the ones it samples)."""
    datasets = {d["name"]: load_dataset(d, i, spec["seed"], work_dir) for i, d in enumerate(spec["datasets"])}
    row_rng = np.random.default_rng(spec["seed"])
    return [
        build_any_environment(e, i, datasets, rewards, row_rng, spec, work_dir) if only is None or only[i] else None
        for i, e in enumerate(spec["environments"])
    ]
