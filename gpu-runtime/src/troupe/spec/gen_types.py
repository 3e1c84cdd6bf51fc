"""`python -m troupe.spec.gen_types`: write spec/runspec_types.py, the RunSpec as frozen dataclasses, from the JSON Schema.

The schema (schema/runspec.v1.schema.json) is generated from the contracts' zod RunSpec; these classes are
generated from it in turn, so the Python types cannot drift from the contract (tests/test_spec_types.py
regenerates and compares). One class per object of the schema, named by its place (`trainer` -> `Trainer`,
`actors[].training` -> `ActorTraining`); a `oneOf` of objects becomes a union of classes told apart by their
constant field (`source: "tiny"`), or by a required field of their own where the constant is shared. Attributes are snake_case; `from_dict` reads a validated, defaults-filled
spec, `json_name` maps an attribute back to its field, and `to_dict` gives a section back as its JSON document.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("runspec_types.py")


def snake(name: str) -> str:
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return out + "_" if keyword.iskeyword(out) else out


def camel_class(*parts: str) -> str:
    return "".join(p[:1].upper() + p[1:] for part in parts for p in re.split(r"[_\W]+", part) if p)


SINGULAR = {"actors": "Actor", "datasets": "Dataset", "rewards": "Reward", "environments": "Environment", "tags": "Tag"}


class Generator:
    def __init__(self) -> None:
        self.classes: list[str] = []

    def type_of(self, schema: dict[str, Any], name: str) -> tuple[str, str]:
        """(annotation, expression converting a JSON value `v`): `{}` in the expression stands for the value."""
        if "oneOf" in schema or "anyOf" in schema:
            variants = schema.get("oneOf") or schema.get("anyOf")
            if all(v.get("type") == "object" for v in variants):
                return self.union(variants, name)
            return " | ".join(sorted({self.type_of(v, name)[0] for v in variants})), "{}"
        if "const" in schema:
            return f"Literal[{schema['const']!r}]", "{}"
        kind = schema.get("type")
        if "enum" in schema:
            return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]", "{}"
        if kind == "integer":
            return "int", "{}"
        if kind == "number":
            return "float", "{}"
        if kind == "string":
            return "str", "{}"
        if kind == "boolean":
            return "bool", "{}"
        if kind == "array" and "prefixItems" in schema:  # a fixed-length tuple (betas)
            types = [self.type_of(x, name)[0] for x in schema["prefixItems"]]
            return "tuple[" + ", ".join(types) + "]", "tuple({})"
        if kind == "array":
            items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
            item_type, item_expr = self.type_of(items, name)
            if item_expr == "{}":
                return f"tuple[{item_type}, ...]", "tuple({})"
            return f"tuple[{item_type}, ...]", "tuple(" + item_expr.replace("{}", "x") + " for x in {})"
        if kind == "object" and "properties" in schema:
            return name, name + ".from_dict({})" if self.object(schema, name) else "{}"
        if kind == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                value_type, value_expr = self.type_of(extra, name + "Value")
                if value_expr != "{}":
                    return f"Mapping[str, {value_type}]", "{k: " + value_expr.replace("{}", "x") + " for k, x in {}.items()}"
                return f"Mapping[str, {value_type}]", "dict({})"
            return "Mapping[str, Any]", "dict({})"
        return "Any", "{}"

    def union(self, variants: list[dict[str, Any]], name: str) -> tuple[str, str]:
        """Variants told apart by their constant field (`source: "tiny"`); where several share the constant (an MCP
        server by `command` or by `url`), by a required field only that variant has."""
        key = next(k for k, v in variants[0]["properties"].items() if "const" in v)
        consts = [v["properties"][key]["const"] for v in variants]
        if len(set(consts)) == len(consts):
            names = []
            for v, const in zip(variants, consts):
                cls = name + camel_class(str(const))
                self.object(v, cls)
                names.append((const, cls))
            dispatch = "{" + ", ".join(f"{c!r}: {cls}" for c, cls in names) + "}"
            return " | ".join(cls for _, cls in names), f"{dispatch}[{{}}[{key!r}]].from_dict({{}})"
        by_field = []
        for v, const in zip(variants, consts):
            others = set().union(*(set(o.get("required", [])) for o in variants if o is not v))
            own = sorted(set(v.get("required", [])) - others)
            if not own:
                raise ValueError(f"{name}: variants with {key}={const!r} have no required field of their own to tell them apart")
            cls = name + camel_class(str(const)) + camel_class(own[0])
            self.object(v, cls)
            by_field.append((own[0], cls))
        pick = by_field[-1][1]
        for field, cls in reversed(by_field[:-1]):
            pick = f"({cls} if {field!r} in {{}} else {pick})"
        return " | ".join(cls for _, cls in by_field), f"{pick}.from_dict({{}})"

    def object(self, schema: dict[str, Any], name: str) -> bool:
        required = set(schema.get("required", []))
        lines_required, lines_optional, reads = [], [], []
        for field, sub in schema["properties"].items():
            annotation, expr = self.type_of(sub, ("" if name == "RunSpec" else name) + camel_class(SINGULAR.get(field, field)))
            attr = snake(field)
            if "default" in sub and field not in required:  # filled by load_spec: always there in a validated spec
                lines_required.append(f"    {attr}: {annotation}")
                reads.append(f"            {attr}=" + expr.replace("{}", f"d.get({field!r}, {sub['default']!r})") + ",")
                continue
            value = expr.replace("{}", f"d[{field!r}]")
            if field in required:
                lines_required.append(f"    {attr}: {annotation}")
                reads.append(f"            {attr}={value},")
            else:
                lines_optional.append(f"    {attr}: {annotation} | None = None")
                reads.append(f"            {attr}={value} if d.get({field!r}) is not None else None,")
        doc = schema.get("description", "").replace('"""', "'''")
        names = {snake(f): f for f in schema["properties"]}
        body = [
            "@dataclass(frozen=True)",
            f"class {name}:",
            f'    """{doc}"""' if doc else f'    """`{name}` of the RunSpec."""',
            "",
            *lines_required,
            *lines_optional,
            "",
            f"    JSON_NAMES: ClassVar[Mapping[str, str]] = {names!r}",
            "",
            "    @classmethod",
            f"    def from_dict(cls, d: Mapping[str, Any]) -> {name}:",
            "        return cls(",
            *reads,
            "        )",
        ]
        self.classes.append("\n".join(body))
        return True


def render(schema: dict[str, Any]) -> str:
    gen = Generator()
    gen.object(schema, "RunSpec")
    head = (
        '"""The RunSpec v1 as frozen dataclasses. Generated by `python -m troupe.spec.gen_types` from\n'
        'schema/runspec.v1.schema.json; never edit by hand (tests/test_spec_types.py checks it is current)."""\n\n'
        "from __future__ import annotations\n\n"
        "from dataclasses import dataclass\n"
        "from typing import Any, ClassVar, Literal, Mapping\n\n\n"
    )
    return head + "\n\n\n".join(gen.classes) + TAIL


TAIL = '''


def json_name(cls: type, attr: str) -> str:
    """The spec field an attribute reads (`learning_rate` -> `learningRate`)."""
    return cls.JSON_NAMES[attr]  # type: ignore[attr-defined,no-any-return]


def to_dict(section: Any) -> Any:
    """A section back as its JSON document (what `from_dict` read, defaults filled; absent optional fields stay
    absent), for the parts that still read the spec as a dict. Arrays come back as lists."""
    names = getattr(type(section), "JSON_NAMES", None)
    if names is not None:
        return {field: to_dict(getattr(section, attr)) for attr, field in names.items() if getattr(section, attr) is not None}
    if isinstance(section, tuple):
        return [to_dict(x) for x in section]
    if isinstance(section, Mapping):
        return {k: to_dict(v) for k, v in section.items()}
    return section
'''


def schema_text() -> str:
    return resources.files("troupe").joinpath("schema", "runspec.v1.schema.json").read_text(encoding="utf-8")


def main() -> int:
    OUT.write_text(render(json.loads(schema_text())), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
