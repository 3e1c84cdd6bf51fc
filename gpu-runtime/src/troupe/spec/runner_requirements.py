"""The contracts' table of what a spec asks of a runner's host (packages/contracts/src/runners.ts
`RUNNER_REQUIREMENTS`), read from the generated schema/runner-requirements.v1.json and evaluated against
what `python -m troupe capabilities --json` reports. The web refuses a launch no live runner can honour
with this table; spec/support.py refuses the same fields on a host without them, and
tests/test_runner_requirements.py holds the two to each other."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

REQUIREMENTS_FILE = "runner-requirements.v1.json"


@dataclass(frozen=True)
class Requirement:
    id: str
    field: str
    when: dict[str, Any]
    needs: tuple[str, ...]
    label: str
    unless: dict[str, Any] | None = None  # {"sibling": dotted path beside the field, "oneOf": [values]}: not asked after all


@dataclass(frozen=True)
class SpecRequirement:
    requirement: Requirement
    path: str
    gpu_count: int | None = None


@cache
def requirements() -> tuple[Requirement, ...]:
    text = resources.files("troupe").joinpath("schema", REQUIREMENTS_FILE).read_text(encoding="utf-8")
    table = json.loads(text)["requirements"]
    return tuple(Requirement(r["id"], r["field"], r["when"], tuple(r["needs"]), r["label"], r.get("unless")) for r in table)


def has_capability(caps: dict[str, Any], key: str) -> bool:
    if key == "cuda":
        return caps["cuda"] is not None and len(caps["gpus"]) > 0
    if key == "sandbox":
        return bool(caps["sandbox"]["usable"])
    group, _, name = key.partition(".")
    if group == "engines":
        return bool(caps["engines"].get(name))
    if group in ("clusterKinds", "precisions"):
        return name in caps[group]
    raise ValueError(f"unknown capability key {key!r}")


def _reach(value: Any, parts: list[str], at: list[str]) -> list[tuple[str, Any]]:
    if not parts:
        return [(".".join(at), value)]
    head, rest = parts[0], parts[1:]
    if head == "*":
        return [hit for i, item in enumerate(value) for hit in _reach(item, rest, [*at, str(i)])] if isinstance(value, list) else []
    if not isinstance(value, dict) or head not in value:
        return []
    return _reach(value[head], rest, [*at, head])


def _asks(when: dict[str, Any], value: Any) -> bool:
    if "equals" in when:
        return bool(value == when["equals"])
    if "startsWith" in when:
        return isinstance(value, str) and value.startswith(when["startsWith"])
    if "nonEmpty" in when:
        return isinstance(value, list) and len(value) > 0
    return value is not None


def _excused(req: Requirement, spec: dict[str, Any], path: str) -> bool:
    if not req.unless:
        return False
    parent: Any = spec
    for part in path.split(".")[:-1] + req.unless["sibling"].split("."):
        parent = parent[int(part)] if isinstance(parent, list) and part.isdigit() and int(part) < len(parent) else parent.get(part) if isinstance(parent, dict) else None
    return isinstance(parent, str) and parent in req.unless["oneOf"]


def spec_requirements(spec: dict[str, Any]) -> list[SpecRequirement]:
    out: list[SpecRequirement] = []
    for req in requirements():
        for path, value in _reach(spec, req.field.split("."), []):
            if _asks(req.when, value) and not _excused(req, spec, path):
                out.append(SpecRequirement(req, path, max(value) + 1 if req.id == "gpus" else None))
    return out


def unmet_requirements(spec: dict[str, Any], caps: dict[str, Any]) -> list[SpecRequirement]:
    """The demands of `spec` this host (its capabilities) cannot meet."""
    return [
        need
        for need in spec_requirements(spec)
        if not all(has_capability(caps, key) for key in need.requirement.needs)
        or (need.gpu_count is not None and len(caps["gpus"]) < need.gpu_count)
    ]
