"""Round specs: who speaks when in a multi-agent episode, e.g. ``Bob -> Alice -> (Bob/Alice)*5``.

The Python side of packages/dsl (the TypeScript package owns the language; its README has
the grammar and the PRNG). Same trees, same typed errors at the same positions, and the
same schedules for the same (spec, actors, seed); packages/dsl/conformance holds the cases
both implementations pass.

    node = compile_spec("Bob -> Alice -> (Bob/Alice)*5", actors=["Bob", "Alice"], max_turns=16)
    sample(node, seed=7, actors=["Bob", "Alice"])   # [["Bob"], ["Alice"], ...], 7 turns

Pure Python, no dependencies.
"""

from .bounds import normalize_actors, turn_bounds
from .errors import ERROR_KINDS, SYNTAX_ERROR_KINDS, VALIDATION_ERROR_KINDS, DslError, SpecError
from .formatter import format_spec
from .nodes import (
    ACTOR_NAME,
    DEFAULT_MAX_TURNS,
    MAX_COUNT,
    MAX_DEPTH,
    MAX_WEIGHT,
    NO_SPAN,
    Actor,
    AnyActor,
    Choice,
    Node,
    Option,
    Parallel,
    Position,
    Repeat,
    Sequence,
    Span,
    to_dict,
)
from .parser import parse, try_parse
from .prng import SplitMix64
from .sample import Schedule, sample, sample_many
from .stats import ActorStats, SpecStats, expected_turns, stats
from .suggest import did_you_mean, edit_distance
from .validate import check, compile_spec, validate

__all__ = [
    "ACTOR_NAME",
    "DEFAULT_MAX_TURNS",
    "ERROR_KINDS",
    "MAX_COUNT",
    "MAX_DEPTH",
    "MAX_WEIGHT",
    "NO_SPAN",
    "SYNTAX_ERROR_KINDS",
    "VALIDATION_ERROR_KINDS",
    "Actor",
    "ActorStats",
    "AnyActor",
    "Choice",
    "DslError",
    "Node",
    "Option",
    "Parallel",
    "Position",
    "Repeat",
    "Schedule",
    "Sequence",
    "Span",
    "SpecError",
    "SpecStats",
    "SplitMix64",
    "check",
    "compile_spec",
    "did_you_mean",
    "edit_distance",
    "expected_turns",
    "format_spec",
    "normalize_actors",
    "parse",
    "sample",
    "sample_many",
    "stats",
    "to_dict",
    "try_parse",
    "turn_bounds",
    "validate",
]

