"""The fixed opponents of Elo ratings, registered by name (the names are the contracts' `RATING_OPPONENTS`).

A fixed player picks a legal move from the board alone; it never reads text. `random` is the anchor (1000):
the same uniformly random legal player that game environments play against (envs/games/players.py).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..envs.games.board import BoardGame
from ..envs.games.players import random_move

FixedPolicy = Callable[[BoardGame, np.random.Generator], int]
FIXED_PLAYERS: dict[str, FixedPolicy] = {}
ANCHOR = "random"


def register_fixed_player(name: str) -> Callable[[FixedPolicy], FixedPolicy]:
    def add(policy: FixedPolicy) -> FixedPolicy:
        FIXED_PLAYERS[name] = policy
        return policy

    return add


register_fixed_player(ANCHOR)(random_move)


@register_fixed_player("first_move")
def first_move(game: BoardGame, rng: np.random.Generator) -> int:
    """A scripted player: always the lowest-numbered legal move (cell 1, 2, ... or the leftmost open column)."""
    return int(game.legal_moves()[0])
