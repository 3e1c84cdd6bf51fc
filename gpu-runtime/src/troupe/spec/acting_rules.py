"""Cross-field rules of the environments that act (code, tools, python), mirrored from
packages/contracts/src/runSpec.ts (same paths, same words)."""

from __future__ import annotations

from typing import Any

from ..algorithms.names import OFFLINE_FAMILY
from .issues import FieldIssue
from .outcome_rules import OUTCOME_KINDS

ACTING_KINDS = ("code", "tools", "python")
# Kinds that score their episodes themselves, so they may list no spec reward.
SELF_SCORING_KINDS = ("code", "python", "game", "remote", *OUTCOME_KINDS)


def acting_environment_issues(env: dict[str, Any], i: int, algorithm: str = "grpo") -> list[FieldIssue]:
    p = f"environments.{i}"
    kind = env.get("kind")
    issues = []
    # sft and dpo train on dataset rows, not on rewards (their rewards, if any, are evaluated only).
    if not env.get("rewards") and kind not in SELF_SCORING_KINDS and algorithm not in OFFLINE_FAMILY:
        issues.append(FieldIssue(f"{p}.rewards", "add at least one"))
    if kind == "python" and not env.get("entrypoint"):
        issues.append(FieldIssue(f"{p}.entrypoint", 'a python environment needs an entrypoint ("module:Class" or "file.py:Class")'))
    for key, owner, words in (("entrypoint", "python", "an entrypoint"), ("params", "python", "params"), ("code", "code", "code settings"), ("tools", "tools", "tools settings")):
        if kind != owner and env.get(key) is not None:
            issues.append(FieldIssue(f"{p}.{key}", f"only {owner} environments take {words}"))
    if kind in ACTING_KINDS and kind != "python" and len(env.get("actors", [])) != 1:
        issues.append(FieldIssue(f"{p}.actors", f"a {kind} environment has exactly one actor"))
    return issues
