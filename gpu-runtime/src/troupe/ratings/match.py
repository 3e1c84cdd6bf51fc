"""Rating games: two players, each a model (an actor's current weights or a frozen snapshot) or a fixed
policy, play one board game as the game environment would show it to them (envs/games/environment.py):

    <system prompt>\n<game> (<moves>): alice is X, bob is O. [X plays 5. ]<board>\n
    alice:<move>\n  game:<board or the fixed player's reply and board>\n  bob:<move>\n ...

Each model side has its own token view (a player can face a snapshot of itself under the same name), and
samples its move after its `name:` header, as in training. An unreadable or illegal move forfeits, as in
training. Games are played side by side: at each turn every model samples one batch over the games where it
is to move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..engines.rollout import EnginePrompt
from ..engines.rollout.sampling import SamplingSettings
from ..envs.collaborative import SEPARATOR
from ..envs.games.board import MARKS, BoardGame, parse_move
from .fixed_players import FixedPolicy


@dataclass(frozen=True)
class ModelSide:
    """A model player: the actor it is (its name is its header), the engine holding the weights it plays with."""

    key: str  # the rated player's id, e.g. "alice@20"
    actor: str
    engine: Any
    tokenizer: Any
    sampling: SamplingSettings  # the actor's typed evalSampling (or sampling) section
    system: str | None


@dataclass(frozen=True)
class FixedSide:
    key: str
    policy: FixedPolicy


Side = ModelSide | FixedSide


@dataclass
class _Game:
    board: BoardGame
    sides: tuple[Side, Side]
    views: dict[int, list[int]] = field(default_factory=dict)  # side index -> token ids so far
    turns: int = 0


def _say(g: _Game, speaker: str, text: str) -> None:
    for k, view in g.views.items():
        tok = g.sides[k].tokenizer  # type: ignore[union-attr]
        view.extend(tok.encode(f"{speaker}:{text}{SEPARATOR}", False))


def _fixed_moves(g: _Game, rng: np.random.Generator) -> str:
    """Moves of fixed players while it is their turn; the text the game says about them."""
    text = ""
    while not g.board.over and isinstance(side := g.sides[g.board.to_move], FixedSide):
        player = g.board.to_move
        move = side.policy(g.board, rng)
        g.board.play(move)
        text += f"{MARKS[player]} plays {move}. "
    return text


def _opening(g: _Game, rng: np.random.Generator) -> None:
    lo, hi = g.board.move_range
    hint = f"{lo}-{hi}, {'row by row' if g.board.name == 'tic_tac_toe' else 'columns'}"
    names = ", ".join(f"{s.actor} is {MARKS[k]}" for k, s in enumerate(g.sides) if isinstance(s, ModelSide))
    opening = f"{g.board.name} ({hint}): {names}. {_fixed_moves(g, rng)}{g.board.render()}"
    for k, side in enumerate(g.sides):
        if isinstance(side, ModelSide):
            prefix = (side.system + SEPARATOR if side.system else "") + opening + SEPARATOR
            g.views[k] = list(side.tokenizer.encode(prefix, False))


def score_of_first(board: BoardGame) -> float:
    """What X scored: 1 win, 0.5 draw (or a game cut off unfinished), 0 loss (a forfeit is a loss)."""
    if board.result is None or board.result[0] == board.result[1]:
        return 0.5
    return 1.0 if board.result[0] > board.result[1] else 0.0


def play_games(game_name: str, pairings: Sequence[tuple[Side, Side]], rng: np.random.Generator, max_turns: int) -> list[float]:
    """Play one game per pairing (first side X); X's score in each. `max_turns` counts model turns per game,
    as the environment's `maxTurns` does; a game cut off there is scored a draw."""
    games = [_Game(BoardGame.new(game_name), (x, o)) for x, o in pairings]
    for g in games:
        _opening(g, rng)
    while True:
        waiting: dict[str, list[_Game]] = {}
        for g in games:
            if not g.board.over and g.turns < max_turns:
                waiting.setdefault(g.sides[g.board.to_move].key, []).append(g)
        if not waiting:
            return [score_of_first(g.board) for g in games]
        for batch in waiting.values():
            side: ModelSide = batch[0].sides[batch[0].board.to_move]  # type: ignore[assignment]
            header = side.tokenizer.encode(f"{side.actor}:", False)
            prompts = [EnginePrompt(g.views[g.board.to_move] + header) for g in batch]
            texts = side.engine.generate(prompts, side.sampling).texts
            for g, text in zip(batch, texts):
                _move(g, side, text, rng)


def _move(g: _Game, side: ModelSide, text: str, rng: np.random.Generator) -> None:
    player = g.board.to_move
    g.turns += 1
    _say(g, side.actor, text)
    move = parse_move(text)
    if move is None or move not in g.board.legal_moves():
        g.board.lose_by_forfeit(player)
        said = "no move" if move is None else f"illegal move {move}"
        _say(g, "game", f"{said}: {g.board.outcome_text()}. {g.board.render()}")
        return
    g.board.play(move)
    reply = _fixed_moves(g, rng)
    over = f" {g.board.outcome_text()}" if g.board.over else ""
    _say(g, "game", f"{reply}{g.board.render()}{over}")
