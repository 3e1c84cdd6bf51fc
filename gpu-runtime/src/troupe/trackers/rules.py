"""Which trackers this host can open: the contracts' runner-requirements table names the same packages
(`tensorboard`, `wandb`), so the web refuses a launch no runner can honour and the runtime refuses it here."""

from __future__ import annotations

import importlib.util
from typing import Any, Mapping

from ..spec.issues import FieldIssue

PACKAGE_OF = {"tensorboard": "tensorboard", "wandb": "wandb"}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module in sys.modules without a spec
        return False


def tracker_issues(spec: Mapping[str, Any]) -> list[FieldIssue]:
    issues = []
    for i, tracker in enumerate(spec["trainer"].get("trackers") or []):
        package = PACKAGE_OF[tracker["kind"]]
        if not _installed(package):
            issues.append(FieldIssue(f"trainer.trackers.{i}.kind", f'"{tracker["kind"]}" needs the {package} package on this host (pip install {package}); it is not installed here'))
    return issues
