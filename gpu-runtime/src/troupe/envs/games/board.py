"""A two-player PettingZoo classic game as text: moves are numbers a model can write, the board is
a few short lines it can read.

    tic_tac_toe   cells 1-9, row by row from the top left     X.O/.X./..O
    connect_four  columns 1-7, left to right                  6 rows of 7, top row first

PettingZoo is an optional extra (`pip install troupe[games]`, pulling `pettingzoo` and `pygame`,
which its classic games import); it is imported when a game is first built.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

GAMES = ("tic_tac_toe", "connect_four")
MARKS = ("X", "O")  # player 1 (moves first), player 2
_FIRST_INT = re.compile(r"\d+")


def pettingzoo_available() -> bool:
    try:
        import pettingzoo.classic  # noqa: F401
        import pygame  # noqa: F401  (PettingZoo's classic games import it at module level)
    except ImportError:
        return False
    return True


def _raw_env(name: str) -> Any:
    # pygame prints a banner on import; PettingZoo's classic games import it.
    import os

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    if name == "tic_tac_toe":
        from pettingzoo.classic.tictactoe.tictactoe import env
    elif name == "connect_four":
        from pettingzoo.classic.connect_four.connect_four import env
    else:
        raise ValueError(f"unknown game {name!r} (known: {', '.join(GAMES)})")
    return env()


@dataclass
class BoardGame:
    """One game in progress. Players are 0 (X, first) and 1 (O)."""

    name: str
    env: Any = field(repr=False)
    moves: list[int] = field(default_factory=list)  # the players' moves, as the numbers they wrote
    result: list[float] | None = None  # per player when over: 1 win, 0 draw, -1 loss
    forfeit: int | None = None  # the player who lost by an illegal or unreadable move

    @classmethod
    def new(cls, name: str, seed: int = 0) -> BoardGame:
        env = _raw_env(name)
        env.reset(seed=seed)
        return cls(name, env)

    @property
    def over(self) -> bool:
        return self.result is not None

    @property
    def to_move(self) -> int:
        return self.env.possible_agents.index(self.env.agent_selection)

    @property
    def move_range(self) -> tuple[int, int]:
        return (1, 9) if self.name == "tic_tac_toe" else (1, 7)

    def _action(self, move: int) -> int:
        """Our move number -> PettingZoo's action (tic-tac-toe numbers its squares column by column)."""
        if self.name == "tic_tac_toe":
            r, c = divmod(move - 1, 3)
            return c * 3 + r
        return move - 1

    def legal_moves(self) -> list[int]:
        if self.over:
            return []
        mask = self.env.observe(self.env.agent_selection)["action_mask"]
        lo, hi = self.move_range
        return [m for m in range(lo, hi + 1) if mask[self._action(m)]]

    def grid(self) -> list[list[str]]:
        """Rows top to bottom of "X", "O" or "."."""
        obs = self.env.observe(self.env.possible_agents[0])["observation"]
        if self.name == "tic_tac_toe":
            obs = np.transpose(obs, (1, 0, 2))  # PettingZoo's first axis is the column
        return [["X" if cell[0] else "O" if cell[1] else "." for cell in row] for row in obs]

    def render(self) -> str:
        return "/".join("".join(row) for row in self.grid())

    def play(self, move: int) -> None:
        """Play a legal move for the player to move; ends the game when it is decided."""
        if move not in self.legal_moves():
            raise ValueError(f"illegal move {move} (legal: {self.legal_moves()})")
        player = self.to_move
        self.env.step(self._action(move))
        self.moves.append(move)
        agents = self.env.possible_agents
        if any(self.env.terminations[a] or self.env.truncations[a] for a in agents):
            rewards = [float(self.env.rewards[a]) for a in agents]
            self.result = rewards
        assert self.over or self.to_move != player

    def lose_by_forfeit(self, player: int) -> None:
        self.forfeit = player
        self.result = [-1.0 if p == player else 0.0 for p in (0, 1)]

    def outcome_text(self) -> str:
        assert self.result is not None
        if self.forfeit is not None:
            return f"{MARKS[self.forfeit]} forfeits"
        if self.result[0] == self.result[1]:
            return "draw"
        return f"{MARKS[0] if self.result[0] > 0 else MARKS[1]} wins"


def parse_move(text: str) -> int | None:
    """The first whole number in the text (`"7"`, `"cell 7"`, `" 7\\n"`), or None."""
    match = _FIRST_INT.search(text)
    return int(match.group(0)) if match else None
