"""Every game a `kind: "game"` environment can play, by `game.name`: how to make it and what the runner needs.

A game registers a `GameKind` (`register_game`): its name, a factory from the environment's game settings to a
`troupe.Environment`, and the requirement it runs on (checked before anything is queued, with the field that
names it). The board games register in environment.py, chess (played by chess.js in a Node server) beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

# (the environment's index, game settings, its maxTurns, seed from the environment's name) -> the game's `Environment`
GameFactory = Callable[[int, dict[str, Any], int, int], Any]


@dataclass(frozen=True)
class Requirement:
    """What a game needs on the runner: `name` is the key a caller may answer for (spec checks pass what they
    detected), `field` the spec field the issue points at (relative to the environment)."""

    name: str
    available: Callable[[], bool]
    missing: str
    field: str


@dataclass(frozen=True)
class GameKind:
    name: str
    make: GameFactory
    requires: Requirement


GAME_KINDS: dict[str, GameKind] = {}


def register_game(kind: GameKind) -> None:
    if kind.name in GAME_KINDS:
        raise ValueError(f'game "{kind.name}" is registered twice')
    GAME_KINDS[kind.name] = kind


def game_names() -> tuple[str, ...]:
    return tuple(GAME_KINDS)
