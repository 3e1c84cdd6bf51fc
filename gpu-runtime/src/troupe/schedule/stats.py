"""Exact statistics from the tree (mirrors stats.ts, same float operations in the same order)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence as Seq, Tuple

from .bounds import normalize_actors, turn_bounds
from .nodes import Actor, AnyActor, Choice, Node, Parallel, Repeat, Sequence

# name -> (min acts, max acts, expected acts)
_Acc = Tuple[int, int, float]


@dataclass(frozen=True)
class ActorStats:
    min_turns: int
    max_turns: int
    expected_turns: float


@dataclass(frozen=True)
class SpecStats:
    min_turns: int
    max_turns: int
    expected_turns: float
    max_actors_per_turn: int
    actors: Dict[str, ActorStats]  # environment actors in order, then other names the spec uses


def stats(node: Node, actors: Seq[str]) -> SpecStats:
    names = normalize_actors(actors)
    per_actor = _actor_turns(node, names)
    order = names + [n for n in per_actor if n not in names]
    lo, hi = turn_bounds(node)
    result = {}
    for name in order:
        a = per_actor.get(name, (0, 0, 0.0))
        result[name] = ActorStats(a[0], a[1], a[2])
    return SpecStats(lo, hi, expected_turns(node), _max_actors_per_turn(node), result)


def expected_turns(node: Node) -> float:
    if isinstance(node, (Actor, AnyActor, Parallel)):
        return 1
    if isinstance(node, Sequence):
        total = 0
        for item in node.items:
            total += expected_turns(item)
        return total
    if isinstance(node, Choice):
        weighted = 0
        weights = 0
        for o in node.options:
            weighted += o.weight * expected_turns(o.node)
            weights += o.weight
        return weighted / weights
    if isinstance(node, Repeat):
        return (expected_turns(node.body) * (node.min + node.max)) / 2
    raise TypeError(f"not a round-spec node: {node!r}")


def _max_actors_per_turn(node: Node) -> int:
    if isinstance(node, (Actor, AnyActor)):
        return 1
    if isinstance(node, Parallel):
        return sum(_max_actors_per_turn(b) for b in node.branches)
    if isinstance(node, Repeat):
        return _max_actors_per_turn(node.body)
    if isinstance(node, Sequence):
        return max(_max_actors_per_turn(n) for n in node.items)
    if isinstance(node, Choice):
        return max(_max_actors_per_turn(o.node) for o in node.options)
    raise TypeError(f"not a round-spec node: {node!r}")


def _actor_turns(node: Node, actors: List[str]) -> Dict[str, _Acc]:
    if isinstance(node, Actor):
        return {node.name: (1, 1, 1)}
    if isinstance(node, AnyActor):
        only = 1 if len(actors) == 1 else 0
        return {a: (only, 1, 1 / len(actors)) for a in actors}
    if isinstance(node, (Sequence, Parallel)):
        parts = [_actor_turns(n, actors) for n in (node.items if isinstance(node, Sequence) else node.branches)]
        out = parts[0]
        for part in parts[1:]:
            out = _add(out, part)
        return out
    if isinstance(node, Repeat):
        return {
            name: (a[0] * node.min, a[1] * node.max, (a[2] * (node.min + node.max)) / 2)
            for name, a in _actor_turns(node.body, actors).items()
        }
    if isinstance(node, Choice):
        parts = [_actor_turns(o.node, actors) for o in node.options]
        names: List[str] = []
        for part in parts:
            for name in part:
                if name not in names:
                    names.append(name)
        total = 0
        for o in node.options:
            total += o.weight
        out: Dict[str, _Acc] = {}
        for name in names:
            each = [p.get(name, (0, 0, 0)) for p in parts]
            weighted = 0
            for i, a in enumerate(each):
                weighted += node.options[i].weight * a[2]
            out[name] = (min(a[0] for a in each), max(a[1] for a in each), weighted / total)
        return out
    raise TypeError(f"not a round-spec node: {node!r}")


def _add(a: Dict[str, _Acc], b: Dict[str, _Acc]) -> Dict[str, _Acc]:
    out = dict(a)
    for name, acc in b.items():
        prev = out.get(name)
        out[name] = (prev[0] + acc[0], prev[1] + acc[1], prev[2] + acc[2]) if prev else acc
    return out
