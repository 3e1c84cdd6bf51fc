"""The built-in frozen opponent: a uniformly random legal move, from a seeded generator."""

from __future__ import annotations

import numpy as np

from .board import BoardGame


def random_move(game: BoardGame, rng: np.random.Generator) -> int:
    legal = game.legal_moves()
    return int(legal[int(rng.integers(len(legal)))])
