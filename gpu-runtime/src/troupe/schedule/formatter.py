"""Canonical text for a tree (mirrors format.ts): ``parse(format_spec(node)) == node``."""

from __future__ import annotations

from .nodes import Actor, AnyActor, Choice, Node, Parallel, Repeat, Sequence

# Binding strength: a child looser than its slot needs parentheses (choices bring their own).
_LEVEL = {Sequence: 1, Choice: 5, Parallel: 3, Repeat: 4, Actor: 5, AnyActor: 5}


def format_spec(node: Node) -> str:
    return _render(node, 0)


def _render(node: Node, slot: int) -> str:
    text = _bare(node)
    return f"({text})" if _LEVEL[type(node)] < slot else text


def _bare(node: Node) -> str:
    if isinstance(node, Actor):
        return node.name
    if isinstance(node, AnyActor):
        return "*"
    if isinstance(node, Sequence):
        return " -> ".join(_render(n, 2) for n in node.items)
    if isinstance(node, Choice):
        weighted = any(o.weight != 1 for o in node.options)
        return "(" + " / ".join(_render(o.node, 3) + (f":{o.weight}" if weighted else "") for o in node.options) + ")"
    if isinstance(node, Parallel):
        return " & ".join(_render(n, 4) for n in node.branches)
    if isinstance(node, Repeat):
        body = "(*)" if isinstance(node.body, AnyActor) else _render(node.body, 4)
        count = f"{node.min}" if node.min == node.max else f"({node.min}..{node.max})"
        return f"{body}*{count}"
    raise TypeError(f"not a round-spec node: {node!r}")
