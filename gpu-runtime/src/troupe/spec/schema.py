"""The RunSpec JSON Schema (generated from the zod contracts): default filling and validation.

Defaults are filled the way zod's `.default()` does: a missing (not null) property whose schema
has a `default` gets a copy of it, as is; present values are walked recursively, and in a
discriminated union (`oneOf` whose branches pin a `const` discriminator) the branch the value
names is walked. Validation then runs on the filled document (JSON Schema Draft 2020-12), and
its errors are rewritten so each names the field at fault.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from .issues import FieldIssue, format_path

RUNSPEC_SCHEMA_FILE = "runspec.v1.schema.json"
EVENTS_SCHEMA_FILE = "events.v1.schema.json"


@lru_cache(maxsize=None)
def load_schema(file_name: str) -> dict[str, Any]:
    text = resources.files("troupe").joinpath("schema", file_name).read_text(encoding="utf-8")
    return json.loads(text)


def runspec_schema() -> dict[str, Any]:
    return load_schema(RUNSPEC_SCHEMA_FILE)


def events_schema() -> dict[str, Any]:
    return load_schema(EVENTS_SCHEMA_FILE)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Follow a local `$ref` (`#/$defs/X`), in case the export starts sharing definitions."""
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and schema["$ref"].startswith("#/"):
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        schema = node
        seen += 1
        if seen > 32:
            raise ValueError("$ref cycle in schema")
    return schema


def _discriminator(branches: list[dict[str, Any]]) -> str | None:
    """The property every branch pins with `const` (zod's discriminatedUnion key), if any."""
    common: set[str] | None = None
    for b in branches:
        keys = {k for k, s in (b.get("properties") or {}).items() if isinstance(s, dict) and "const" in s}
        common = keys if common is None else common & keys
    return sorted(common)[0] if common else None


def _branch_for(value: Any, branches: list[dict[str, Any]], root: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    resolved = [_resolve(b, root) for b in branches]
    key = _discriminator(resolved)
    if key is None or not isinstance(value, dict) or key not in value:
        return None
    for i, b in enumerate(resolved):
        if b["properties"][key]["const"] == value[key]:
            return i, b
    return None


def fill_defaults(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A copy of `value` with every missing defaulted property filled (zod semantics, see module doc)."""
    root = schema if root is None else root
    schema = _resolve(schema, root)
    for union_key in ("oneOf", "anyOf"):
        if union_key in schema:
            picked = _branch_for(value, schema[union_key], root)
            return fill_defaults(value, picked[1], root) if picked else copy.deepcopy(value)
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties") or {}
        out = dict(value)
        for key, sub in props.items():
            sub = _resolve(sub, root)
            if key not in out:
                if "default" in sub:
                    out[key] = copy.deepcopy(sub["default"])
            else:
                out[key] = fill_defaults(out[key], sub, root)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in out:
                if key not in props:
                    out[key] = fill_defaults(out[key], extra, root)
        return out
    if isinstance(value, list):
        prefix = schema.get("prefixItems") or []
        items = schema.get("items")
        out_list = []
        for i, item in enumerate(value):
            if i < len(prefix):
                out_list.append(fill_defaults(item, prefix[i], root))
            elif isinstance(items, dict):
                out_list.append(fill_defaults(item, items, root))
            else:
                out_list.append(copy.deepcopy(item))
        return out_list
    return copy.deepcopy(value)


def _issues_from_error(error: ValidationError, root: dict[str, Any]) -> list[FieldIssue]:
    path = list(error.absolute_path)
    if error.validator == "oneOf" and isinstance(error.validator_value, list):
        branches = error.validator_value
        picked = _branch_for(error.instance, branches, root)
        if picked is not None:
            index = picked[0]
            sub = [e for e in error.context or [] if e.relative_schema_path and e.relative_schema_path[0] == index]
            out: list[FieldIssue] = []
            for e in sub:
                out.extend(_issues_from_error(e, root))
            if out:
                return out
        key = _discriminator([_resolve(b, root) for b in branches])
        if key is not None:
            options = [str(_resolve(b, root)["properties"][key]["const"]) for b in branches]
            if isinstance(error.instance, dict):
                if key not in error.instance:
                    return [FieldIssue(format_path(path + [key]), f"is required (one of {', '.join(options)})")]
                found = json.dumps(error.instance[key])
                return [FieldIssue(format_path(path + [key]), f"{found} is not one of {', '.join(options)}")]
            return [FieldIssue(format_path(path), f"must be an object with `{key}` one of {', '.join(options)}")]
    if error.validator == "required":
        missing = [p for p in error.validator_value if isinstance(error.instance, dict) and p not in error.instance]
        return [FieldIssue(format_path(path + [m]), "is required") for m in missing] or [
            FieldIssue(format_path(path), error.message)
        ]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set((error.schema.get("properties") or {}).keys())
        extras = [k for k in error.instance if k not in allowed]
        if extras:
            return [FieldIssue(format_path(path + [k]), "is not a known field") for k in extras]
    if error.validator == "const":
        return [FieldIssue(format_path(path), f"must be {json.dumps(error.validator_value)}")]
    if error.validator == "enum":
        options = ", ".join(json.dumps(v) for v in error.validator_value)
        return [FieldIssue(format_path(path), f"{json.dumps(error.instance)} is not one of {options}")]
    return [FieldIssue(format_path(path), error.message)]


def schema_issues(document: Any, schema: dict[str, Any] | None = None) -> list[FieldIssue]:
    """Every JSON Schema violation in `document`, each naming its field, in document order."""
    schema = runspec_schema() if schema is None else schema
    validator = Draft202012Validator(schema)
    issues: list[FieldIssue] = []
    def order(e: ValidationError) -> list[tuple[int, Any]]:
        return [(0, p) if isinstance(p, int) else (1, str(p)) for p in e.absolute_path]

    for error in sorted(validator.iter_errors(document), key=order):
        issues.extend(_issues_from_error(error, schema))
    # The same problem can be reached twice (e.g. through nested unions); report it once.
    unique: dict[tuple[str, str], FieldIssue] = {}
    for issue in issues:
        unique.setdefault((issue.path, issue.message), issue)
    return list(unique.values())
