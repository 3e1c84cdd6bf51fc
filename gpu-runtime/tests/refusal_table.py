"""Every refusal a user can hit, read from the code: the runtime's field-named refusals (FieldIssue,
SpecError.at and the rule modules' `no(path, message)` in src/troupe) and the contracts' rules that the
runtime does not repeat (packages/contracts/src/*Rules.ts). Prints the README's refusal table:

    .venv/bin/python gpu-runtime/tests/refusal_table.py --write   (rewrites the README's table)

`tests/test_refusal_table.py` fails when the README's table is not what this prints now.
Placeholders: `N` an index, `<...>` a value from the spec or the host.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[1] / "src" / "troupe"
CONTRACTS = Path(__file__).resolve().parents[2] / "packages" / "contracts" / "src"
CALLS = {"no", "FieldIssue", "at", "add", "refuse"}
INDEX_NAMES = {"i", "j", "k", "n", "index", "actor_index", "env_index", "idx"}
BEGIN, END = "<!-- refusals:begin (tests/refusal_table.py) -->", "<!-- refusals:end -->"


@dataclass(frozen=True)
class Refusal:
    field: str
    when: str
    message: str
    where: str


def _render(node: ast.expr, names: dict[str, ast.expr], depth: int = 0) -> str | None:
    """A string literal or f-string as text: index variables as N, other values as <...>."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in names and depth < 3:  # a message kept in a module constant
        return _render(names[node.id], names, depth + 1)
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                v = part.value
                if isinstance(v, ast.Name) and v.id in names and depth < 3:
                    inner = _render(names[v.id], names, depth + 1)
                    out.append(inner if inner is not None else f"<{v.id}>")
                elif isinstance(v, ast.Name) and v.id in INDEX_NAMES:
                    out.append("N")
                else:
                    out.append(f"<{ast.unparse(v)}>")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _render(node.left, names, depth), _render(node.right, names, depth)
        return left + right if left is not None and right is not None else None
    return None


def _short(text: str, limit: int = 110) -> str:
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def python_refusals() -> list[Refusal]:
    out: list[Refusal] = []
    for path in sorted(RUNTIME.rglob("*.py")):
        if "schema" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(RUNTIME.parent).as_posix()
        module_names = {**_imported_constants(tree, path), **_constants(tree)}
        for func in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            names: dict[str, ast.expr] = dict(module_names)  # rebound in code order as _visit walks the body
            _visit(func.body, [], names, rel, func.name, out)
    return out


def _constants(tree: ast.Module) -> dict[str, ast.expr]:
    """A module's messages kept in module constants."""
    return {
        n.targets[0].id: n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and isinstance(n.value, (ast.Constant, ast.JoinedStr, ast.BinOp))
    }


def _imported_constants(tree: ast.Module, path: Path) -> dict[str, ast.expr]:
    """Messages a module imports from another runtime module's constants (`from ..x import URL_HINT`)."""
    out: dict[str, ast.expr] = {}
    for n in tree.body:
        if not isinstance(n, ast.ImportFrom) or not n.level or not n.module:
            continue
        base = path.parent
        for _ in range(n.level - 1):
            base = base.parent
        source = base.joinpath(*n.module.split("."))
        source = source / "__init__.py" if source.is_dir() else source.with_suffix(".py")
        if not source.is_file():
            continue
        constants = _constants(ast.parse(source.read_text(encoding="utf-8")))
        out.update({a.asname or a.name: constants[a.name] for a in n.names if a.name in constants})
    return out


def _visit(body: list[ast.stmt], conditions: list[str], names: dict[str, ast.expr], rel: str, fname: str, out: list[Refusal]) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue  # visited as functions of their own
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if isinstance(stmt.value, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                names[stmt.targets[0].id] = stmt.value  # the binding in force for the calls after it (p = f"actors.{i}")
        if isinstance(stmt, ast.If):
            test = ast.unparse(stmt.test)
            _visit(stmt.body, conditions + [test], names, rel, fname, out)
            _visit(stmt.orelse, conditions + [f"not ({test})"], names, rel, fname, out)
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], (ast.stmt, ast.ExceptHandler)):
                if field == "handlers":
                    for h in inner:
                        _visit(h.body, conditions + [f"except {ast.unparse(h.type) if h.type else ''}".strip()], names, rel, fname, out)
                else:
                    _visit(inner, conditions, names, rel, fname, out)
        for node in ast.walk(stmt) if not isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)) else _own_exprs(stmt):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id if isinstance(node.func, ast.Name) else ""
            if callee not in CALLS:
                continue
            first = node.args[0]
            # A field computed elsewhere (sandbox_rules' list of fields) shows as <name>; a message must be written here.
            field = f"<{first.id}>" if isinstance(first, ast.Name) and first.id not in names else _render(first, names)
            message = _render(node.args[1], names)
            if field is None or message is None or not re.match(r"^[A-Za-z<]", field):
                continue
            when = " and ".join(conditions[-2:]) or "always checked"
            out.append(Refusal(field, _short(when), message, f"{rel}:{fname}"))


def _own_exprs(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions of a compound statement itself (its header), not of its body."""
    parts: list[ast.AST] = []
    for field in ("iter", "test", "items"):
        value = getattr(stmt, field, None)
        if isinstance(value, list):
            for item in value:
                parts.extend(ast.walk(item))
        elif isinstance(value, ast.AST):
            parts.extend(ast.walk(value))
    return parts


TS_ADD = re.compile(r"""\badd\(\s*(\[[^\]]*\])\s*,\s*(`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""", re.S)
TS_OBJ = re.compile(r"""path:\s*(\[[^\]]*\])\s*,\s*message:\s*(`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""", re.S)


def _ts_path(items: str) -> str:
    parts = []
    for raw in items.strip("[]").split(","):
        raw = raw.strip()
        if not raw:
            continue
        if raw[0] in "\"'":
            parts.append(raw[1:-1])
        elif raw.startswith("..."):
            parts.append("<" + raw[3:] + ">")
        else:
            parts.append("N" if re.fullmatch(r"[a-z]\w*(\.i)?|\w+\.i", raw) and raw.split(".")[-1] in INDEX_NAMES | {"i"} else f"<{raw}>")
    return ".".join(parts)


def _ts_message(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\$\{([^}]*)\}", lambda m: f"<{m.group(1).strip()}>", body)


TS_CONST = re.compile(r"""const (\w+) = "([^"]*)";""")


def contract_refusals(known: set[str]) -> list[Refusal]:
    out: list[Refusal] = []
    for path in sorted(CONTRACTS.glob("*Rules.ts")):
        text = path.read_text(encoding="utf-8")
        for name, value in TS_CONST.findall(text):
            text = text.replace("${" + name + "}", value)
        # actorIssues' `add` paths are relative to the actor.
        prefix = "actors.N." if path.name == "actorRules.ts" else ""
        for pattern in (TS_ADD, TS_OBJ):
            for m in pattern.finditer(text):
                message = _ts_message(m.group(2))
                if _key(message) in known:
                    continue
                known.add(_key(message))
                field = _ts_path(m.group(1))
                field = prefix + field if pattern is TS_ADD and not field.startswith(("actors", "environments", "trainer", "algorithm")) else field
                out.append(Refusal(field, "checked before queueing (the contracts)", message, f"contracts/{path.name}"))
    return out


def _key(message: str) -> str:
    return re.sub(r"<[^>]*>|\W", "", message).lower()[:80]


def refusals() -> list[Refusal]:
    seen: set[tuple[str, str]] = set()
    py: list[Refusal] = []
    for r in python_refusals():
        if (r.field, r.message) not in seen:
            seen.add((r.field, r.message))
            py.append(r)
    return py + contract_refusals({_key(r.message) for r in py})


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table() -> str:
    lines = [
        BEGIN,
        "| field | when | message | where |",
        "| --- | --- | --- | --- |",
    ]
    for r in refusals():
        lines.append(f"| `{_cell(r.field)}` | `{_cell(r.when)}` | {_cell(r.message)} | `{r.where}` |")
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_readme(readme: Path = Path(__file__).resolve().parents[1] / "README.md") -> None:
    """Replaces the table between the markers in the runtime's README."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END) + 1
    readme.write_text(text[:start] + table() + text[end:], encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv:
        write_readme()
    else:
        sys.stdout.write(table())
