"""A spec problem tied to the field it concerns, and the error that carries a list of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence


def format_path(path: Iterable[object]) -> str:
    """Dotted path like the contracts' `formatPath`: `actors.0.training.learningRate`, `(root)` for the document."""
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "(root)"


@dataclass(frozen=True)
class FieldIssue:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class SpecError(Exception):
    """The spec is invalid, or asks for something this runtime does not support (exit code 2)."""

    def __init__(self, issues: Sequence[FieldIssue]):
        if not issues:
            raise ValueError("SpecError needs at least one issue")
        self.issues = list(issues)
        super().__init__("; ".join(str(i) for i in self.issues))

    @property
    def field(self) -> str:
        """The first field at fault (what the `error` event's `field` carries)."""
        return self.issues[0].path

    @classmethod
    def at(cls, path: str, message: str) -> "SpecError":
        return cls([FieldIssue(path, message)])
