"""Schedules from a spec (mirrors sample.ts draw for draw).

Draws happen in execution order, depth first, left to right: a choice draws its option
(weighted) before running it, a repeat draws its count with between(min, max) before its
iterations, ``*`` draws below(len(actors)). Draws with one possible outcome consume nothing.
"""

from __future__ import annotations

from typing import List, Sequence as Seq

from .bounds import normalize_actors
from .errors import SpecError
from .nodes import DEFAULT_MAX_TURNS, Actor, AnyActor, Choice, Node, Parallel, Repeat, Sequence
from .prng import MASK, SplitMix64, to_seed
from .validate import validate

Schedule = List[List[str]]


def sample(node: Node, seed: int, actors: Seq[str], max_turns: int = DEFAULT_MAX_TURNS) -> Schedule:
    """One schedule: a list of turns, each the actor names acting at it. Raises SpecError if invalid."""
    return sample_many(node, seed, 1, actors, max_turns)[0]


def sample_many(node: Node, seed: int, n: int, actors: Seq[str], max_turns: int = DEFAULT_MAX_TURNS) -> List[Schedule]:
    """``n`` schedules; schedule i is ``sample(node, (seed + i) mod 2^64)``."""
    errors = validate(node, actors, max_turns)
    if errors:
        raise SpecError(errors)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    names = normalize_actors(actors)
    first = to_seed(seed)
    out: List[Schedule] = []
    for i in range(n):
        rng = SplitMix64((first + i) & MASK)
        turns: Schedule = []
        _emit(node, rng, names, turns)
        out.append(turns)
    return out


def _emit(node: Node, rng: SplitMix64, actors: List[str], turns: Schedule) -> None:
    if isinstance(node, Actor):
        turns.append([node.name])
    elif isinstance(node, AnyActor):
        turns.append([actors[rng.below(len(actors))]])
    elif isinstance(node, Sequence):
        for item in node.items:
            _emit(item, rng, actors, turns)
    elif isinstance(node, Choice):
        i = rng.weighted([o.weight for o in node.options])
        _emit(node.options[i].node, rng, actors, turns)
    elif isinstance(node, Repeat):
        for _ in range(rng.between(node.min, node.max)):
            _emit(node.body, rng, actors, turns)
    elif isinstance(node, Parallel):
        # validate guarantees each branch yields exactly one turn.
        turn: List[str] = []
        for branch in node.branches:
            own: Schedule = []
            _emit(branch, rng, actors, own)
            turn.extend(own[0])
        turns.append(turn)
    else:
        raise TypeError(f"not a round-spec node: {node!r}")
