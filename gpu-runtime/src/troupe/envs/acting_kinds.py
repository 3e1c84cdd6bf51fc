"""The acting kinds by name (`python`, `code`, `tools`, `game`, `remote`): how each makes the `Environment` object
that speaks between turns. An acting kind is added here with one line; environment_kinds.py registers every
one of them as an environment kind (built by acting_build.py)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .environment_api import Environment
from ..spec import SpecError
from ..spec.runspec_types import Environment as EnvironmentSection, to_dict


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


ImplFactory = Callable[[EnvironmentSection, int, Path], Environment]


@dataclass(frozen=True)
class ActingKind:
    """How an acting kind makes its `Environment` object; `opening_in_reset`: its `reset` may write the opening,
    so the dataset need not have the prompt's column."""

    make: ImplFactory
    opening_in_reset: bool = False


def _python_impl(section: EnvironmentSection, index: int, work_dir: Path) -> Environment:
    assert section.entrypoint is not None  # the schema requires an entrypoint for python environments
    cls = load_environment_class(section.entrypoint, work_dir, f"environments.{index}.entrypoint")
    try:
        return cls()
    except Exception as e:  # noqa: BLE001
        raise SpecError.at(f"environments.{index}.entrypoint", f"{cls.__name__}() failed: {type(e).__name__}: {e}") from e


# The optional kinds import their modules when built: code and tools pull in the sandboxed runners and MCP,
# games PettingZoo's wrappers, remote the HTTP/gRPC clients; a run without them never loads them.
def _code_impl(section: EnvironmentSection, index: int, work_dir: Path) -> Environment:
    from .code_env import CodeEnvironment  # registry entry loaded on demand (above)

    # CodeEnvironment is also a user-facing class that takes its settings as the spec writes them.
    return CodeEnvironment(to_dict(section.code) if section.code is not None else {})


def _tools_impl(section: EnvironmentSection, index: int, work_dir: Path) -> Environment:
    from .tools_env import ToolsEnvironment  # registry entry loaded on demand: MCP's client only for tools

    # ToolsEnvironment is also a user-facing class that takes its settings as the spec writes them.
    return ToolsEnvironment(to_dict(section.tools) if section.tools is not None else {}, f"environments.{index}.tools")


def _game_impl(section: EnvironmentSection, index: int, work_dir: Path) -> Environment:
    from .games.environment import GameEnvironment  # registry entry loaded on demand: PettingZoo's wrappers

    return GameEnvironment.from_section(section, index)


def _remote_impl(section: EnvironmentSection, index: int, work_dir: Path) -> Environment:
    from .remote.environment import RemoteEnvironment  # registry entry loaded on demand: the HTTP/gRPC clients

    return RemoteEnvironment.from_section(section.url, section.remote, index)


# The `Environment` object of each acting kind, by name (environment_kinds.py registers each as a kind).
ACTING_IMPLS: dict[str, ActingKind] = {
    "python": ActingKind(_python_impl, opening_in_reset=True),
    "code": ActingKind(_code_impl),
    "tools": ActingKind(_tools_impl),
    "game": ActingKind(_game_impl, opening_in_reset=True),
    "remote": ActingKind(_remote_impl, opening_in_reset=True),
}
