"""Specs with user code need the sandbox: refused, by field, where none can start here.

User code is `rewards[i].source.kind: "python"` and the `code` and `tools` environments (they
run what the model wrote, and user tools); all run under the run's `sandbox` settings. Rewards named in `in_process` are library functions the caller passed
(`run_spec(rewards=...)`): they run in the caller's process, trusted, and need no sandbox.
"""

from __future__ import annotations

from typing import Any, Collection

from ..sandbox.availability import sandbox_status
from ..sandbox.limits import Limits
from .issues import FieldIssue

SANDBOXED_KINDS = ("code", "tools")


def sandbox_issues(spec: dict[str, Any], in_process: Collection[str] = ()) -> list[FieldIssue]:
    fields = [
        (f"rewards.{i}.source.kind", '"python" rewards run')
        for i, reward in enumerate(spec["rewards"])
        if reward["source"]["kind"] == "python" and reward["name"] not in in_process
    ]
    fields += [(f"environments.{i}.kind", f'"{env["kind"]}" environments run the model\'s code') for i, env in enumerate(spec["environments"]) if env["kind"] in SANDBOXED_KINDS]
    issues = sandbox_settings_issues(spec)
    if not fields:
        return issues
    status = sandbox_status()
    if status.usable:
        return issues
    return issues + [FieldIssue(path, f"{what} in a sandbox, and none can start here: {status.reason}") for path, what in fields]


def sandbox_settings_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    """The run's `sandbox` settings as Limits (one place for rewards, tools and code)."""
    try:
        Limits.from_settings(spec.get("sandbox"))
    except ValueError as e:
        return [FieldIssue("sandbox", str(e))]
    return []
