"""Checks a parsed spec against an environment (mirrors validate.ts, same error order)."""

from __future__ import annotations

from typing import List, Optional, Sequence as Seq, Tuple

from .bounds import normalize_actors, turn_bounds
from .errors import DslError, SpecError
from .nodes import DEFAULT_MAX_TURNS, NO_SPAN, Actor, AnyActor, Choice, Node, Parallel, Repeat, Sequence
from .parser import try_parse
from .suggest import did_you_mean


def validate(node: Node, actors: Seq[str], max_turns: int = DEFAULT_MAX_TURNS) -> List[DslError]:
    """Errors in a fixed order: a pre-order walk (source order), then the turn-count checks on the whole spec."""
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be a whole number >= 1, got {max_turns!r}")
    names = normalize_actors(actors)
    known = set(names)
    errors: List[DslError] = []

    # Errors come out in source order: a node's own problem before those inside it, left to right.
    def walk(n: Node, path: Tuple[int, ...]) -> None:
        span = n.span or NO_SPAN
        if isinstance(n, Actor):
            if n.name not in known:
                errors.append(DslError("unknown_actor", _unknown_actor_message(n.name, names), span, path))
        elif isinstance(n, AnyActor):
            if not names:
                errors.append(DslError("no_actors", '"*" means any actor, but this environment has no actors', span, path))
        elif isinstance(n, Parallel):
            for i, branch in enumerate(n.branches):
                lo, hi = turn_bounds(branch)
                if lo != 1 or hi != 1:
                    takes = f"{lo} turns" if lo == hi else f"{lo} to {hi} turns"
                    message = f'each side of "&" must be exactly one turn; this one takes {takes}'
                    errors.append(DslError("parallel_not_single_turn", message, branch.span or NO_SPAN, path + (i,)))
                walk(branch, path + (i,))
        elif isinstance(n, Sequence):
            for i, item in enumerate(n.items):
                walk(item, path + (i,))
        elif isinstance(n, Choice):
            for i, option in enumerate(n.options):
                walk(option.node, path + (i,))
        elif isinstance(n, Repeat):
            walk(n.body, path + (0,))
        else:
            raise TypeError(f"not a round-spec node: {n!r}")

    walk(node, ())
    lo, hi = turn_bounds(node)
    root_span = node.span or NO_SPAN
    if hi > max_turns:
        errors.append(
            DslError("too_many_turns", f"this spec can take up to {hi} turns, more than the maximum of {max_turns}", root_span, ())
        )
    if lo == 0:
        errors.append(
            DslError(
                "zero_turns",
                "this spec can produce an episode with no turns (when its optional parts repeat 0 times); "
                "make at least one turn certain",
                root_span,
                (),
            )
        )
    return errors


def _unknown_actor_message(name: str, actors: List[str]) -> str:
    guess = did_you_mean(name, actors)
    if guess is not None:
        return f'unknown actor "{name}"; did you mean "{guess}"?'
    if not actors:
        return f'unknown actor "{name}"; this environment has no actors'
    return f"unknown actor \"{name}\"; this environment's actors are {', '.join(actors)}"


def check(source: str, actors: Seq[str], max_turns: int = DEFAULT_MAX_TURNS) -> Tuple[Optional[Node], List[DslError]]:
    """Parse and validate: (tree, errors). The tree is None when the text does not parse."""
    node, errors = try_parse(source)
    if node is None:
        return None, errors
    return node, validate(node, actors, max_turns)


def compile_spec(source: str, actors: Seq[str], max_turns: int = DEFAULT_MAX_TURNS) -> Node:
    """A valid tree, or SpecError with every problem (what the runtime calls before its first episode)."""
    node, errors = check(source, actors, max_turns)
    if errors or node is None:
        raise SpecError(errors)
    return node
