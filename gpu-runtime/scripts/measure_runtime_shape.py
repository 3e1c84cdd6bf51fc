"""Measure the runtime's shape the way issue #26's table does, so the numbers can be taken again after a change.

Run from anywhere: `python gpu-runtime/scripts/measure_runtime_shape.py [--files a.py b.py] [--by-file]`.
Everything is read from the source with `ast` (nothing is imported), so the numbers are the same on any machine:

- the step loop: lines of `run_loop` in train.py, of its `for step` loop, and the conditionals in that loop that
  choose by kind (an `isinstance`, or a test naming a kind, family, backend, algorithm, offline learner, async
  producer or critic);
- string-key lookups into the RunSpec: `x["field"]` and `x.get("field")` where `x` is a spec section (a name or
  attribute called spec, trainer, training, algorithm, sampling, ... or a lookup of one);
- `dict[str, Any]` annotations; functions with a parameter called `device`;
- modules at the package's top level; import circles among module-level imports (a package's `__init__` counts as
  imported with any of its modules, except the packages
  the importing module is itself inside), and function-level imports (those of modules outside troupe, the lazy
  imports of optional engines, counted apart).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "troupe"

SPEC_SECTIONS = {
    "spec", "run_spec", "trainer", "training", "algorithm", "sampling", "eval_sampling", "offload", "placement",
    "cluster", "sandbox", "lora", "scheduler", "model", "vllm", "api", "actor_spec", "env_spec", "environment_spec",
    "async_", "dynamic_sampling", "overlong", "importance_correction", "tools", "game", "remote", "prompt", "code",
}
KIND_WORDS = ("isinstance", "kind", "family", "backend", "algorithm", "offline", "async", "producer", "critic", "engine")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def section_root(node: ast.expr) -> bool:
    """Is `node` a RunSpec section: a name/attribute called like one, or a string-key lookup into one?"""
    if isinstance(node, ast.Name):
        return node.id in SPEC_SECTIONS
    if isinstance(node, ast.Attribute):
        return node.attr in SPEC_SECTIONS
    if isinstance(node, ast.Subscript) and is_str(node.slice):
        return section_root(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and is_str(node.args[0]) and section_root(node.func.value)
    return False


def is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def string_key_lookups(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_str(node.slice) and section_root(node.value):
            count += 1
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args and is_str(node.args[0]) and section_root(node.func.value)):
            count += 1
    return count


def annotations(tree: ast.AST) -> list[ast.expr]:
    out: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            out += [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a is not None and a.annotation is not None]
            if node.returns is not None:
                out.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            out.append(node.annotation)
    return out


def dict_any_annotations(tree: ast.AST) -> int:
    return sum(ast.unparse(n).count("dict[str, Any]") for n in annotations(tree))


def device_functions(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            if any(x.arg == "device" for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]):
                names.append(node.name)
    return names


def resolve(current: str, is_package: bool, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The troupe modules an import statement loads (its package `__init__`s included)."""
    targets: list[str] = []
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    else:
        if node.level:
            base = current.split(".") if is_package else current.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            root = ".".join(base + ([node.module] if node.module else []))
        else:
            root = node.module or ""
        targets = [root] + [f"{root}.{a.name}" for a in node.names]
    mine = current.split(".")
    ancestors = {".".join(mine[: i + 1]) for i in range(len(mine))}  # already loading when this module runs
    out = []
    for t in targets:
        if t == "troupe" or t.startswith("troupe."):
            parts = t.split(".")
            out += [p for p in (".".join(parts[: i + 1]) for i in range(len(parts))) if p not in ancestors]
    return out


def function_level_imports(tree: ast.AST) -> tuple[int, int]:
    """(imports of troupe modules, imports of outside modules) inside function bodies."""
    inner, outer = 0, 0
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom):
                if node.level or (node.module or "").startswith("troupe"):
                    inner += 1
                else:
                    outer += 1
            elif isinstance(node, ast.Import):
                if any(a.name.startswith("troupe") for a in node.names):
                    inner += 1
                else:
                    outer += 1
    return inner, outer


def module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported (not under `if TYPE_CHECKING`, not in functions)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                found.append(stmt)
            elif isinstance(stmt, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(stmt.test):
                    visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                visit(stmt.body)
                for h in stmt.handlers:
                    visit(h.body)
                visit(stmt.orelse)
                visit(stmt.finalbody)
            elif isinstance(stmt, ast.With):
                visit(stmt.body)

    visit(tree.body)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            strong(v)
    return out


def step_loop(train_py: Path) -> dict[str, int]:
    tree = ast.parse(train_py.read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "run_loop")
    loop = next(n for n in ast.walk(fn) if isinstance(n, ast.For) and ast.unparse(n.target) == "step")
    tests = [n.test for n in ast.walk(loop) if isinstance(n, (ast.If, ast.IfExp, ast.While))]
    by_kind = [t for t in tests if any(w in ast.unparse(t) for w in KIND_WORDS)]
    return {
        "run_loop lines": (fn.end_lineno or 0) - fn.lineno + 1,
        "step loop lines": (loop.end_lineno or 0) - loop.lineno + 1,
        "step loop conditionals": len(tests),
        "step loop choices by kind": len(by_kind),
    }


def measure(files: list[Path]) -> dict[str, object]:
    lookups, dict_any, device_fns, inner, outer = 0, 0, [], 0, 0
    files_with_lookups = 0
    for f in files:
        tree = ast.parse(f.read_text(encoding="utf-8"))
        n = string_key_lookups(tree)
        lookups += n
        files_with_lookups += n > 0
        dict_any += dict_any_annotations(tree)
        device_fns += [f"{module_name(f)}.{name}" for name in device_functions(tree)]
        i, o = function_level_imports(tree)
        inner, outer = inner + i, outer + o
    return {
        "string-key spec lookups": f"{lookups} in {files_with_lookups} files",
        "dict[str, Any] annotations": dict_any,
        "functions taking device": len(device_fns),
        "function-level imports (troupe / outside)": f"{inner} / {outer}",
        "_device_functions": device_fns,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", nargs="*", help="also measure these files (paths under src/troupe) on their own")
    parser.add_argument("--by-file", action="store_true", help="string-key lookups and device functions per file")
    args = parser.parse_args()
    files = sorted(PACKAGE.rglob("*.py"))
    graph: dict[str, set[str]] = defaultdict(set)
    for f in files:
        me = module_name(f)
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in module_level_imports(tree):
            graph[me].update(t for t in resolve(me, f.name == "__init__.py", node) if t != me)
    rows: dict[str, object] = dict(step_loop(PACKAGE / "train.py"))
    whole = measure(files)
    rows.update({k: v for k, v in whole.items() if not k.startswith("_")})
    rows["top-level modules"] = len([f for f in PACKAGE.glob("*.py") if f.name not in ("__init__.py", "__main__.py")])
    found = circles(graph)
    rows["import circles (module level)"] = len(found)
    width = max(len(k) for k in rows)
    print("whole package (gpu-runtime/src/troupe):")
    for k, v in rows.items():
        print(f"  {k:<{width}}  {v}")
    for c in found:
        print(f"  circle: {' -> '.join(c)}")
    if args.files:
        chosen = sorted({p for pattern in args.files for p in PACKAGE.glob(pattern) if p.suffix == ".py"})
        part = measure(chosen)
        print(f"these {len(chosen)} files ({' '.join(args.files)}):")
        for k, v in part.items():
            if not k.startswith("_"):
                print(f"  {k:<{width}}  {v}")
    if args.by_file:
        for f in files:
            tree = ast.parse(f.read_text(encoding="utf-8"))
            n, d = string_key_lookups(tree), device_functions(tree)
            if n or d:
                print(f"  {module_name(f):<45} lookups {n:>3}  device: {', '.join(d)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
