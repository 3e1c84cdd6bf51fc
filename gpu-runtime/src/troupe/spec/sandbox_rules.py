"""Specs with user code need the sandbox: refused, by field, where none can start here.

User code today is `rewards[i].source.kind: "python"`; issue 17's code and tool environments add
their fields here. Rewards named in `in_process` are library functions the caller passed
(`run_spec(rewards=...)`): they run in the caller's process, trusted, and need no sandbox.
"""

from __future__ import annotations

from typing import Any, Collection

from ..sandbox.availability import sandbox_status
from .issues import FieldIssue


def sandbox_issues(spec: dict[str, Any], in_process: Collection[str] = ()) -> list[FieldIssue]:
    fields = [
        f"rewards.{i}.source.kind"
        for i, reward in enumerate(spec["rewards"])
        if reward["source"]["kind"] == "python" and reward["name"] not in in_process
    ]
    if not fields:
        return []
    status = sandbox_status()
    if status.usable:
        return []
    return [FieldIssue(path, f'"python" rewards run in a sandbox, and none can start here: {status.reason}') for path in fields]
