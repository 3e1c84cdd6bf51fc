"""RunSpec text in, document out: JSON or YAML, with errors at line and column.

The web and REST take a RunSpec as JSON or YAML; the CLI (`python -m troupe run|validate spec.yaml`) takes the
same. YAML is read with the YAML 1.2 core schema's scalars, as the web's `yaml` package reads it, so `no`, `on`
and `1_000` stay strings there and here (PyYAML's default is YAML 1.1, where they would turn into booleans and
numbers). Field issues found later are placed back on the line and column of the field in the text.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath
from typing import Any, Sequence

import yaml

from .issues import FieldIssue, SpecError

YAML_SUFFIXES = (".yaml", ".yml")


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's implicit scalars (bool: true/false only; ints and floats
    without underscores or sexagesimals)."""


_Yaml12Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_CORE_SCALARS = [
    ("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")),
    ("tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
        list("-+.0123456789"),
    ),
]
for _tag, _rx, _first in _CORE_SCALARS:
    _Yaml12Loader.add_implicit_resolver(_tag, _rx, _first)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    value = loader.construct_scalar(node)
    return int(str(value), 0) if str(value).lower().startswith(("0o", "0x")) else int(str(value))


_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def is_yaml_source(source: str) -> bool:
    return PurePath(source).suffix.lower() in YAML_SUFFIXES


def parse_spec_text(text: str, source: str = "spec") -> Any:
    """The parsed document. A `.yaml`/`.yml` source, or any text that does not start like a JSON object, is read
    as YAML; anything else as JSON. Syntax errors raise SpecError with the line and column (1-based)."""
    if is_yaml_source(source) or not text.lstrip().startswith(("{", "[")):
        return _parse_yaml(text, source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError.at("(root)", f"{source} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from e


def _parse_yaml(text: str, source: str) -> Any:
    try:
        documents = list(yaml.load_all(text, Loader=_Yaml12Loader))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise SpecError.at("(root)", f"{source} is not valid YAML: {e.problem or e.context}{where}") from e
    except yaml.YAMLError as e:
        raise SpecError.at("(root)", f"{source} is not valid YAML: {e}") from e
    if len(documents) != 1:
        raise SpecError.at("(root)", f"{source} holds {len(documents)} YAML documents: a RunSpec is exactly one")
    return documents[0]


def field_position(text: str, path: str) -> tuple[int, int] | None:
    """(line, column), 1-based, of the value at a dotted field path (`actors.0.model`) in JSON or YAML text, or of
    its nearest existing parent; None when the text cannot be composed (it parsed before, so this is rare)."""
    try:
        node = yaml.compose(text, Loader=_Yaml12Loader)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    parts = [] if path == "(root)" else path.split(".")
    for part in parts:
        child = _child(node, part)
        if child is None:
            break
        node = child
    return node.start_mark.line + 1, node.start_mark.column + 1


def _child(node: yaml.Node, part: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                return value
    if isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
        return node.value[int(part)]
    return None


def place_issues(issues: Sequence[FieldIssue], text: str) -> list[FieldIssue]:
    """The issues with the line and column of their field in the text added to each message."""
    placed = []
    for issue in issues:
        at = field_position(text, issue.path) if "at line " not in issue.message else None
        placed.append(issue if at is None else FieldIssue(issue.path, f"{issue.message} (line {at[0]}, column {at[1]})"))
    return placed
