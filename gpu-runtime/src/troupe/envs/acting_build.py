"""Build an acting environment (every kind of acting_kinds.py) from its spec: make its object, bind the
dataset, rewards, sampler and the run's sandbox, fail early with the field's path."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .acting import ActingEnvironment
from .acting_kinds import ACTING_IMPLS, load_environment_class  # noqa: F401 - load_environment_class: its old home
from .collaborative import section_round_spec
from .checks import bind_env_rewards, check_prompt_field
from .data import Dataset, RowSampler
from .roles import player_names, role_map
from .environment_api import Environment
from ..rewards.builtin import BoundReward
from ..sandbox import Limits, Sandbox
from ..spec import SpecError
from ..spec.runspec_types import Environment as EnvironmentSection, Sandbox as SandboxSection, to_dict
from .sections import EnvironmentInput, environment_section


def sandbox_limits(sandbox: SandboxSection | None) -> Limits:
    """The run's `sandbox` section (one place for rewards, tools and code), on by default."""
    return Limits.from_settings(to_dict(sandbox) if sandbox is not None else None)


def environment_impl(section: EnvironmentSection, index: int, work_dir: Path) -> Environment:
    kind = ACTING_IMPLS.get(section.kind)
    if kind is None:
        raise ValueError(f"not an acting environment kind: {section.kind}")
    return kind.make(section, index, work_dir)


def build_acting(
    environment: EnvironmentInput,
    index: int,
    datasets: dict[str, Dataset],
    rewards: dict[str, BoundReward],
    rng: np.random.Generator,
    work_dir: Path,
    limits: Limits,
) -> ActingEnvironment:
    section = environment_section(environment)
    dataset = datasets[section.dataset]
    path = f"environments.{index}"
    bound = bind_env_rewards(section, index, dataset, rewards)
    document = to_dict(section)  # roles.py reads the roles from the document
    players = player_names(document)
    node = section_round_spec(section, players, index) if section.round_spec else None
    impl = environment_impl(section, index, work_dir)
    # The environment object sees the players by the names its turns use: the roles when the spec maps them (a game's
    # seats are roles then), else the actors.
    impl.name, impl.actors, impl.max_turns = section.name, players, int(section.max_turns)
    impl.params = dict(section.params or {})
    impl.rewards = {r.name: r for r, _ in bound}
    impl.handles = {}
    impl.sandbox = Sandbox(limits, run_dir=work_dir)
    roles = role_map(document) if section.roles else {}
    env = ActingEnvironment(index, section, dataset, list(section.actors), bound, RowSampler(dataset.train_indices, rng), node, role_actor=roles, impl=impl)
    if not ACTING_IMPLS[section.kind].opening_in_reset:
        check_prompt_field(section, index, dataset)
    first = dataset.train_indices[0]
    env.user_text(dataset.rows[first], first)  # fail early on a bad template
    check = getattr(impl, "check_row", None)
    if check is not None:
        problem = check(dataset.rows[first])
        if problem:
            raise SpecError.at(path, f'dataset "{dataset.name}" row {first}: {problem}')
    return env
