"""Fewest and most turns a node can take (mirrors bounds.ts; Python ints are exact)."""

from __future__ import annotations

from typing import List, Sequence as Seq, Tuple

from .nodes import Actor, AnyActor, Choice, Node, Parallel, Repeat, Sequence


def turn_bounds(node: Node) -> Tuple[int, int]:
    if isinstance(node, (Actor, AnyActor, Parallel)):
        # Every parallel branch acts at the same single turn (validate checks the branches).
        return 1, 1
    if isinstance(node, Sequence):
        parts = [turn_bounds(n) for n in node.items]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if isinstance(node, Choice):
        parts = [turn_bounds(o.node) for o in node.options]
        return min(p[0] for p in parts), max(p[1] for p in parts)
    if isinstance(node, Repeat):
        lo, hi = turn_bounds(node.body)
        return node.min * lo, node.max * hi
    raise TypeError(f"not a round-spec node: {node!r}")


def normalize_actors(actors: Seq[str]) -> List[str]:
    """Duplicates dropped, first occurrence kept; order matters (``*`` indexes this list)."""
    if isinstance(actors, str):
        # A lone string would silently become one actor per character.
        raise TypeError(f"actors must be a list of names, got the string {actors!r}")
    return list(dict.fromkeys(actors))
