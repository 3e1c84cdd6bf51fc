"""Build an acting environment (every kind of acting_kinds.py) from its spec: make its object, bind the
dataset, rewards, sampler and the run's sandbox, fail early with the field's path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .acting import ActingEnvironment
from .acting_kinds import ACTING_IMPLS, load_environment_class  # noqa: F401 - load_environment_class: its old home
from .collaborative import effective_round_spec, round_spec_issues
from .checks import bind_env_rewards, check_prompt_field
from .data import Dataset, RowSampler
from .roles import player_names, role_map
from .environment_api import Environment
from ..rewards.builtin import BoundReward
from ..sandbox import Limits, Sandbox
from ..spec import SpecError
from .. import schedule as dsl


def sandbox_limits(spec: dict[str, Any]) -> Limits:
    """The run's `sandbox` settings (one place for rewards, tools and code), on by default."""
    return Limits.from_settings(spec.get("sandbox"))


def environment_impl(env_spec: dict[str, Any], index: int, work_dir: Path) -> Environment:
    kind = ACTING_IMPLS.get(env_spec["kind"])
    if kind is None:
        raise ValueError(f"not an acting environment kind: {env_spec['kind']}")
    return kind.make(env_spec, index, work_dir)


def build_acting(
    env_spec: dict[str, Any],
    index: int,
    datasets: dict[str, Dataset],
    rewards: dict[str, BoundReward],
    rng: np.random.Generator,
    work_dir: Path,
    limits: Limits,
) -> ActingEnvironment:
    dataset = datasets[env_spec["dataset"]]
    path = f"environments.{index}"
    bound = bind_env_rewards(env_spec, index, dataset, rewards)
    issues = round_spec_issues(env_spec, index)
    if issues:
        raise SpecError.at(*issues[0])
    node = dsl.compile_spec(effective_round_spec(env_spec) or "", player_names(env_spec), env_spec["maxTurns"]) if env_spec.get("roundSpec") else None
    impl = environment_impl(env_spec, index, work_dir)
    # The environment object sees the players by the names its turns use: the roles when the spec maps them (a game's
    # seats are roles then), else the actors.
    impl.name, impl.actors, impl.max_turns = env_spec["name"], player_names(env_spec), int(env_spec["maxTurns"])
    impl.params = dict(env_spec.get("params") or {})
    impl.rewards = {r.name: r for r, _ in bound}
    impl.handles = {}
    impl.sandbox = Sandbox(limits, run_dir=work_dir)
    roles = role_map(env_spec) if env_spec.get("roles") else {}
    env = ActingEnvironment(index, env_spec, dataset, list(env_spec["actors"]), bound, RowSampler(dataset.train_indices, rng), node, role_actor=roles, impl=impl)
    if not ACTING_IMPLS[env_spec["kind"]].opening_in_reset:
        check_prompt_field(env_spec, index, dataset)
    first = dataset.train_indices[0]
    env.user_text(dataset.rows[first], first)  # fail early on a bad template
    check = getattr(impl, "check_row", None)
    if check is not None:
        problem = check(dataset.rows[first])
        if problem:
            raise SpecError.at(path, f'dataset "{dataset.name}" row {first}: {problem}')
    return env
