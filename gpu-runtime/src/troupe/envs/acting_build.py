"""Build an acting environment (`python`, `code`, `tools`) from its spec: load the class, bind the
dataset, rewards, sampler and the run's sandbox, fail early with the field's path."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .acting import ActingEnvironment
from .collaborative import effective_round_spec, round_spec_issues
from .checks import bind_env_rewards, check_prompt_field
from .data import Dataset, RowSampler
from .environment_api import Environment
from ..rewards.builtin import BoundReward
from ..sandbox import Limits, Sandbox
from ..spec import SpecError
from .. import schedule as dsl


def sandbox_limits(spec: dict[str, Any]) -> Limits:
    """The run's `sandbox` settings (one place for rewards, tools and code), on by default."""
    return Limits.from_settings(spec.get("sandbox"))


def load_environment_class(entrypoint: str, work_dir: Path, path: str) -> type[Environment]:
    """`module:Class` (importable here or from the run folder) or `file.py:Class` (relative to the run folder)."""
    module_name, sep, class_name = entrypoint.rpartition(":")
    if not sep or not module_name or not class_name:
        raise SpecError.at(path, f'"{entrypoint}" is not "module:Class" or "file.py:Class"')
    try:
        if module_name.endswith(".py"):
            file = Path(module_name) if Path(module_name).is_absolute() else work_dir / module_name
            if not file.is_file():
                raise SpecError.at(path, f"no file {file}")
            spec = importlib.util.spec_from_file_location(f"troupe_env_{file.stem}", file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            added = str(work_dir) not in sys.path
            if added:
                sys.path.insert(0, str(work_dir))
            try:
                module = importlib.import_module(module_name)
            finally:
                if added:
                    sys.path.remove(str(work_dir))
    except SpecError:
        raise
    except Exception as e:  # noqa: BLE001 - any import error is the spec's problem, said with its path
        raise SpecError.at(path, f'cannot load "{module_name}": {type(e).__name__}: {e}') from e
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Environment)):
        raise SpecError.at(path, f'"{module_name}" has no class "{class_name}" that subclasses troupe.Environment')
    return cls


ImplFactory = Callable[[dict[str, Any], int, Path], Environment]


def _python_impl(env_spec: dict[str, Any], index: int, work_dir: Path) -> Environment:
    cls = load_environment_class(env_spec["entrypoint"], work_dir, f"environments.{index}.entrypoint")
    try:
        return cls()
    except Exception as e:  # noqa: BLE001
        raise SpecError.at(f"environments.{index}.entrypoint", f"{cls.__name__}() failed: {type(e).__name__}: {e}") from e


# The optional kinds import their modules when built: code and tools pull in the sandboxed runners and MCP,
# games PettingZoo's wrappers, remote the HTTP/gRPC clients; a run without them never loads them.
def _code_impl(env_spec: dict[str, Any], index: int, work_dir: Path) -> Environment:
    from .code_env import CodeEnvironment

    return CodeEnvironment(env_spec.get("code") or {})


def _tools_impl(env_spec: dict[str, Any], index: int, work_dir: Path) -> Environment:
    from .tools_env import ToolsEnvironment

    return ToolsEnvironment(env_spec.get("tools") or {}, f"environments.{index}.tools")


def _game_impl(env_spec: dict[str, Any], index: int, work_dir: Path) -> Environment:
    from .games.environment import GameEnvironment

    return GameEnvironment.from_spec(env_spec, index)


def _remote_impl(env_spec: dict[str, Any], index: int, work_dir: Path) -> Environment:
    from .remote.environment import RemoteEnvironment

    return RemoteEnvironment.from_spec(env_spec, index)


# The `Environment` object of each acting kind, by name (environment_kinds.py registers each as a kind).
ACTING_IMPLS: dict[str, ImplFactory] = {"python": _python_impl, "code": _code_impl, "tools": _tools_impl, "game": _game_impl, "remote": _remote_impl}


def environment_impl(env_spec: dict[str, Any], index: int, work_dir: Path) -> Environment:
    impl = ACTING_IMPLS.get(env_spec["kind"])
    if impl is None:
        raise ValueError(f"not an acting environment kind: {env_spec['kind']}")
    return impl(env_spec, index, work_dir)


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
    node = dsl.compile_spec(effective_round_spec(env_spec) or "", env_spec["actors"], env_spec["maxTurns"]) if env_spec.get("roundSpec") else None
    impl = environment_impl(env_spec, index, work_dir)
    impl.name, impl.actors, impl.max_turns = env_spec["name"], list(env_spec["actors"]), int(env_spec["maxTurns"])
    impl.params = dict(env_spec.get("params") or {})
    impl.rewards = {r.name: r for r, _ in bound}
    impl.handles = {}
    impl.sandbox = Sandbox(limits, run_dir=work_dir)
    env = ActingEnvironment(index, env_spec, dataset, list(env_spec["actors"]), bound, RowSampler(dataset.train_indices, rng), node, impl=impl)
    if env_spec["kind"] not in ("python", "game", "remote"):  # these may write the opening in `reset`
        check_prompt_field(env_spec, index, dataset)
    first = dataset.train_indices[0]
    env.user_text(dataset.rows[first], first)  # fail early on a bad template
    check = getattr(impl, "check_row", None)
    if check is not None:
        problem = check(dataset.rows[first])
        if problem:
            raise SpecError.at(path, f'dataset "{dataset.name}" row {first}: {problem}')
    return env
