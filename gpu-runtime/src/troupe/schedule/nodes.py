"""The round-spec syntax tree, the same shape as packages/dsl/src/ast.ts.

Spans and editor ids are excluded from equality, so ``parse(format_spec(node)) == node``
is the round-trip property. Invariants (the parser guarantees them): sequence, choice and
parallel have at least two children; repeat bounds are whole numbers with
0 <= min <= max, 1 <= max <= MAX_COUNT; weights are whole numbers 1..MAX_WEIGHT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

ACTOR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
MAX_COUNT = 1_000_000
MAX_WEIGHT = 1_000_000
# Deepest tree (and most nested parentheses) a spec may have: keeps recursion far from Python's limit.
MAX_DEPTH = 64
# Used when no maximum is given; the RunSpec's own ceiling for an environment's maxTurns.
DEFAULT_MAX_TURNS = 1024


@dataclass(frozen=True)
class Position:
    """``offset`` counts code points from 0; line and column are 1-based (column in code points)."""

    offset: int
    line: int
    column: int


@dataclass(frozen=True)
class Span:
    start: Position
    end: Position  # exclusive


NO_SPAN = Span(Position(0, 1, 1), Position(0, 1, 1))


@dataclass(frozen=True)
class Actor:
    name: str
    span: Optional[Span] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class AnyActor:
    """``*``: one actor drawn uniformly from the environment's actors."""

    span: Optional[Span] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Sequence:
    items: Tuple["Node", ...]
    span: Optional[Span] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Option:
    node: "Node"
    weight: int = 1


@dataclass(frozen=True)
class Choice:
    options: Tuple[Option, ...]
    span: Optional[Span] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Parallel:
    """``a & b``: every branch acts at the same turn; the turn lists their actors in spec order."""

    branches: Tuple["Node", ...]
    span: Optional[Span] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Repeat:
    """``x*3`` is min = max = 3; ``x*(2..5)`` draws the count uniformly from min..max inclusive."""

    body: "Node"
    min: int
    max: int
    span: Optional[Span] = field(default=None, compare=False, repr=False)


Node = Union[Actor, AnyActor, Sequence, Choice, Parallel, Repeat]


def children(node: Node) -> Tuple[Node, ...]:
    if isinstance(node, Sequence):
        return node.items
    if isinstance(node, Choice):
        return tuple(o.node for o in node.options)
    if isinstance(node, Parallel):
        return node.branches
    if isinstance(node, Repeat):
        return (node.body,)
    return ()


def to_dict(node: Node) -> dict:
    """The JSON shape of packages/dsl's AST (without spans), for comparing across languages."""
    if isinstance(node, Actor):
        return {"type": "actor", "name": node.name}
    if isinstance(node, AnyActor):
        return {"type": "any"}
    if isinstance(node, Sequence):
        return {"type": "sequence", "items": [to_dict(n) for n in node.items]}
    if isinstance(node, Choice):
        return {"type": "choice", "options": [{"node": to_dict(o.node), "weight": o.weight} for o in node.options]}
    if isinstance(node, Parallel):
        return {"type": "parallel", "branches": [to_dict(n) for n in node.branches]}
    return {"type": "repeat", "body": to_dict(node.body), "min": node.min, "max": node.max}
