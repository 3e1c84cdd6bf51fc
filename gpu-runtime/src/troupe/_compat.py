"""Compat: import paths the README documents from before the folders of issue #26, kept working.

Users write these in specs (`entrypoint: "troupe.games.environment:GameEnvironment"`) and in code
(`troupe.tokenizer.CharTokenizer`). Each old name is an alias of the module now in its folder: the
same module object, so classes and state are shared, never loaded twice.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import CodeType, ModuleType

# old dotted prefix -> where it lives now
MOVED = {
    "troupe.games": "troupe.envs.games",
    "troupe.remote": "troupe.envs.remote",
    "troupe.tokenizer": "troupe.models.tokenizer",
    "troupe.tools_env": "troupe.envs.tools_env",
    "troupe.collaborative": "troupe.envs.collaborative",
}


def new_name(name: str) -> str | None:
    for old, new in MOVED.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name and hands back the module under its new name."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        real = importlib.util.find_spec(new) if new else None
        if real is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=real.origin, is_package=real.submodule_search_locations is not None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(new_name(spec.name) or spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """The module ran under its new name already."""

    def get_code(self, fullname: str) -> CodeType | None:
        """For `python -m <old name>` (runpy runs the code of the module now in its folder)."""
        spec = importlib.util.find_spec(new_name(fullname) or fullname)
        loader = spec.loader if spec else None
        return loader.get_code(spec.name) if isinstance(loader, importlib.abc.InspectLoader) and spec else None

    def is_package(self, fullname: str) -> bool:
        spec = importlib.util.find_spec(new_name(fullname) or fullname)
        return bool(spec and spec.submodule_search_locations is not None)


def install() -> None:
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
