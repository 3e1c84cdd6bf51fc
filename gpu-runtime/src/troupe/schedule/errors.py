"""Typed spec errors: the same kinds, messages and positions as packages/dsl/src/errors.ts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from .nodes import NO_SPAN, Span

SYNTAX_ERROR_KINDS = (
    "empty_spec",
    "unexpected_character",
    "unexpected_token",
    "unexpected_end",
    "unbalanced_paren",
    "empty_group",
    "repeat_without_subject",
    "bad_count",
    "bad_range",
    "bad_weight",
    "weight_outside_choice",
    "too_deeply_nested",
)
VALIDATION_ERROR_KINDS = ("unknown_actor", "no_actors", "parallel_not_single_turn", "too_many_turns", "zero_turns")
ERROR_KINDS = SYNTAX_ERROR_KINDS + VALIDATION_ERROR_KINDS


@dataclass(frozen=True)
class DslError:
    kind: str
    message: str
    span: Span = NO_SPAN
    # For validation errors: child indexes from the root to the node at fault.
    path: Optional[Tuple[int, ...]] = None

    @property
    def line(self) -> int:
        return self.span.start.line

    @property
    def column(self) -> int:
        return self.span.start.column

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message, "line": self.line, "column": self.column}

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.message} [{self.kind}]"


class SpecError(ValueError):
    """A spec that does not parse or validate; ``errors`` holds every problem found."""

    def __init__(self, errors: List[DslError]):
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = list(errors)
