"""`environments[].kind: "game"`: a two-player board game (PettingZoo) played by actors.

    game: {name: "tic_tac_toe" | "connect_four", opponent: "random" | "actors",
           actorPlays: "first" | "second" | "alternate", legalMoveReward: number}

- opponent "random": one actor plays against the built-in frozen random player (a uniformly random
  legal move from a generator seeded by the environment's name, so runs repeat). `actorPlays` picks
  the actor's side: X moves first; "alternate" gives odd samples of a group the second move.
- opponent "actors": two players play each other, the first is X. The players are the environment's
  `roles` when it names them (envs/roles.py): `roles: {X: policy, O: policy}` is self-play of one policy,
  one model in both seats trained in one update; without roles the two actors are the players (two copies
  of a model, or one trainable against a frozen copy).

The game speaks as the environment between moves (never trained on): the opening names the board
and the side, then after each move the opponent's reply and the board (rows top to bottom, `/`
between rows, `.` empty). A move is the first whole number in the actor's message.
`showLegalMoves: true` lists the legal moves under every board the player to move reads
(`\nlegal: 1 2 4`, as chess does), so a model can copy a legal move instead of counting cells.

With `roles` against the random player, every seat is named as in self-play: the random player sits in
the other mark's seat, named by that mark (`X is X, O is O.`), and its moves are turns of that seat
(`O:3`, then the game's board), so a policy trained by self-play with `roles: {X: policy, O: policy}`
reads, against the random player, exactly the context it trained on. A role named after a mark must
play that mark.

Illegal moves: a message with no number, or a number that is not a legal move, forfeits the game
on the spot: the offender scores -1, its opponent 0, and the environment says so.
Rewards (component "game", per actor): win 1, draw 0, loss -1; a game cut off by maxTurns scores 0.
`legalMoveReward` (default 0) adds that much per legal move the actor made (component
"legal_moves"): shaping for a model that has yet to learn what a move looks like, where every
game would otherwise end in the same forfeit and its group would teach nothing.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..environment_api import Environment, Reply
from ...spec import SpecError
from ...spec.runspec_types import Environment as EnvironmentSection, to_dict
from .chess import CHESS_MISSING, ChessEnvironment, chess_available, chess_setting_issues
from .board import GAMES, MARKS, BoardGame, parse_move, pettingzoo_available
from .players import random_move
from .registry import GAME_KINDS, GameKind, Requirement, game_names, register_game

OPPONENTS = ("random", "actors")
SIDES = ("first", "second", "alternate")
SEATED = "seated"  # not a spec field: set when the environment has `roles` (the module's docstring)
DEFAULTS: dict[str, Any] = {"name": "tic_tac_toe", "opponent": "random", "actorPlays": "first", "legalMoveReward": 0.0}


def game_settings(env_spec: dict[str, Any]) -> dict[str, Any]:
    return {**DEFAULTS, **(env_spec.get("game") or {})}


def game_issues(env_spec: dict[str, Any], index: int, pettingzoo: bool | None = None, chess: bool | None = None) -> list[tuple[str, str]]:
    """(field, message) for a game environment the runtime cannot play. `pettingzoo`: whether this
    host has it (None: look)."""
    p = f"environments.{index}"
    settings = game_settings(env_spec)
    issues = []
    kind = GAME_KINDS.get(settings["name"])
    need = kind.requires if kind is not None else PETTINGZOO  # an unknown name: said after what the board games need
    answered = {"pettingzoo": pettingzoo, "chess": chess}.get(need.name)
    if not (need.available() if answered is None else answered):
        issues.append((f"{p}.{need.field}", need.missing))
    if kind is None:
        issues.append((f"{p}.game.name", f'unknown game "{settings["name"]}" (known: {", ".join(game_names())})'))
    if settings["opponent"] not in OPPONENTS:
        issues.append((f"{p}.game.opponent", f'must be one of {", ".join(OPPONENTS)}'))
    # The seats are the roles when the environment maps them (`roles: {X: policy, O: policy}` is self-play), else the actors.
    by_role = env_spec.get("roles") is not None
    seats = list(env_spec["roles"]) if by_role else list(env_spec["actors"])
    seat_field = f"{p}.roles" if by_role else f"{p}.actors"
    if settings["opponent"] == "random" and len(seats) != 1:
        issues.append((seat_field, "a game against the random player has exactly one " + ("role" if by_role else "actor")))
    elif settings["opponent"] == "actors" and len(seats) != 2:
        issues.append((seat_field, "a game between actors has exactly two " + ("roles (the first plays X and moves first)" if by_role else "(the first plays X and moves first)")))
    if settings["actorPlays"] not in SIDES:
        issues.append((f"{p}.game.actorPlays", f'must be one of {", ".join(SIDES)}'))
    elif by_role and settings["opponent"] == "random" and len(seats) == 1 and seats[0] in MARKS:
        side = {"X": "first", "O": "second"}[seats[0]]
        if settings["actorPlays"] != side:
            issues.append((seat_field, f'the role "{seats[0]}" plays {seats[0]}: against the random player it needs actorPlays "{side}" (the random player sits in the other mark\'s seat)'))
    elif settings["opponent"] == "actors" and settings["actorPlays"] != "first":
        issues.append((f"{p}.game.actorPlays", 'only for opponent "random": between actors the first actor plays X'))
    issues.extend(chess_setting_issues(settings, p))  # moveFormat, cutoff: chess only (games/chess.py)
    bonus = settings["legalMoveReward"]
    if isinstance(bonus, bool) or not isinstance(bonus, (int, float)) or bonus < 0:
        issues.append((f"{p}.game.legalMoveReward", "must be a number >= 0"))
    return issues


def _name_seed(name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"game:{name}".encode()).digest()[:8], "little")


class GameEnvironment(Environment):
    speaker = "game"

    def __init__(self, settings: dict[str, Any] | None = None, seed: int | None = None) -> None:
        """From the spec (`from_spec`), or with no arguments as a `python` environment class, whose
        `params` are the game settings (`entrypoint: "troupe.games.environment:GameEnvironment"`)."""
        self.settings = settings or {}
        self.rng = np.random.default_rng(seed)

    def setup(self) -> None:
        if not self.settings:
            spec = {"name": self.name, "actors": self.actors, "game": self.params}
            issues = game_issues(spec, 0)
            if issues:
                raise ValueError(f"{issues[0][0].replace('environments.0.game', 'params')}: {issues[0][1]}")
            self.settings = game_settings(spec)
            self.rng = np.random.default_rng(_name_seed(self.name))

    @classmethod
    def from_section(cls, section: EnvironmentSection, index: int) -> Environment:
        """The game of a `kind: "game"` environment's typed section (its `game` settings are checked as the spec
        writes them: game_issues is also the spec's rule)."""
        return cls._checked(to_dict(section), index, section.max_turns, section.name)

    @classmethod
    def from_spec(cls, env_spec: dict[str, Any], index: int) -> Environment:
        """The same from an environment's JSON document (maxTurns may be absent: no cutoff)."""
        return cls._checked(env_spec, index, int(env_spec.get("maxTurns") or 0), env_spec["name"])

    @staticmethod
    def _checked(document: dict[str, Any], index: int, max_turns: int, name: str) -> Environment:
        issues = game_issues(document, index)
        if issues:
            raise SpecError.at(*issues[0])
        settings = game_settings(document)
        if document.get("roles"):
            settings[SEATED] = True  # every seat named, the random player's by its mark (the module's docstring)
        return GAME_KINDS[settings["name"]].make(index, settings, max_turns, _name_seed(name))

    # -- who plays which side
    def players(self, episode: Any) -> list[str | None]:
        """[X, O]: actor names, None for the random player."""
        if self.settings["opponent"] == "actors":
            return [self.actors[0], self.actors[1]]
        side = self.settings["actorPlays"]
        second = side == "second" or (side == "alternate" and episode.sample % 2 == 1)
        return [None, self.actors[0]] if second else [self.actors[0], None]

    def _move_hint(self, game: BoardGame) -> str:
        lo, hi = game.move_range
        return f"{lo}-{hi}, {'row by row' if game.name == 'tic_tac_toe' else 'columns'}"

    @property
    def seated(self) -> bool:
        """Every seat named and every move a turn of its seat (`roles` given: the module's docstring)."""
        return bool(self.settings.get(SEATED))

    def board(self, game: BoardGame) -> str:
        """The board, and the legal moves under it while the game goes on (`showLegalMoves`)."""
        listed = self.settings.get("showLegalMoves") and not game.over
        return game.render() + (f"\nlegal: {' '.join(map(str, game.legal_moves()))}" if listed else "")

    def reset(self, episode: Any) -> str | list[str | Reply]:
        game = BoardGame.new(self.settings["name"])
        players = self.players(episode)
        episode.state.update(game=game, players=players)
        seats = [name if name is not None or not self.seated else MARKS[k] for k, name in enumerate(players)]
        sides = ", ".join(f"{name} is {MARKS[k]}" for k, name in enumerate(seats) if name is not None)
        head = f"{game.name} ({self._move_hint(game)}): {sides}. "
        if players[0] is not None:
            return head + self.board(game)
        move = random_move(game, self.rng)  # the random player moves first
        if self.seated:  # as a turn of its seat, between two boards, as self-play shows it
            empty = head + self.board(game)
            game.play(move)
            return [empty, Reply(str(move), speaker=MARKS[0]), Reply(self.board(game))]
        game.play(move)
        return f"{head}{MARKS[0]} plays {move}. {self.board(game)}"

    def next_speaker(self, episode: Any, turn: int) -> str | None:
        game: BoardGame = episode.state["game"]
        if episode.done or game.over:
            return None
        return episode.state["players"][game.to_move]

    def step(self, episode: Any, message: Any) -> str | list[Reply]:
        game: BoardGame = episode.state["game"]
        player = game.to_move
        move = parse_move(message.text)
        if move is None or move not in game.legal_moves():
            game.lose_by_forfeit(player)
            episode.done = True
            said = "no move" if move is None else f"illegal move {move}"
            return f"{said}: {game.outcome_text()}. {game.render()}"
        game.play(move)
        if game.over or episode.state["players"][game.to_move] is not None:
            return self._after_move(episode, game)
        reply = random_move(game, self.rng)
        if self.seated:  # the random player's move as a turn of its seat, between two boards, as self-play shows it
            before = self.board(game)
            game.play(reply)
            return [Reply(before), Reply(str(reply), speaker=MARKS[1 - player]), Reply(self._after_move(episode, game))]
        game.play(reply)
        return f"{MARKS[1 - player]} plays {reply}. {self._after_move(episode, game)}"

    def _after_move(self, episode: Any, game: BoardGame) -> str:
        """The board after a legal move, with the outcome when it ended the game."""
        if game.over:
            episode.done = True
            return f"{game.render()} {game.outcome_text()}"
        return self.board(game)

    def metrics(self, episodes: Any) -> dict[str, float]:
        """Per actor (named `game/<actor>/<what>`; acting.py reports each under its actor as `game/<what>`):
        the share of its games it won, drew, lost (forfeits included), forfeited itself, and that were cut
        off by maxTurns unfinished. Against the random player the other side is nobody's."""
        counts: dict[str, dict[str, int]] = {}
        for episode in episodes:
            game: BoardGame | None = episode.state.get("game")
            if game is None:
                continue
            for k, name in enumerate(episode.state["players"]):
                if name is None:
                    continue
                c = counts.setdefault(name, {"games": 0, "win": 0, "draw": 0, "loss": 0, "forfeit": 0, "unfinished": 0})
                c["games"] += 1
                if game.result is None:
                    c["unfinished"] += 1
                elif game.forfeit == k:
                    c["forfeit"] += 1
                    c["loss"] += 1
                elif game.forfeit is not None:
                    c["win"] += 1  # the opponent forfeited: scored 0, counted as a win of the game
                elif game.result[k] > 0:
                    c["win"] += 1
                elif game.result[k] < 0:
                    c["loss"] += 1
                else:
                    c["draw"] += 1
        return {f"game/{name}/{what}": c[what] / c["games"] for name, c in counts.items() for what in ("win", "draw", "loss", "forfeit", "unfinished") if c["games"]}

    def score(self, episode: Any) -> dict[str, float | dict[str, float]]:
        game: BoardGame = episode.state["game"]
        out: dict[str, float | dict[str, float]] = {}
        bonus = float(self.settings["legalMoveReward"])
        for k, name in enumerate(episode.state["players"]):
            if name is not None:
                out[name] = {"game": game.result[k] if game.result is not None else 0.0}
                if bonus:
                    # Moves alternate X, O, X...: player k made the moves at k, k + 2, ...
                    out[name]["legal_moves"] = bonus * len(game.moves[k::2])
        return out


PETTINGZOO = Requirement("pettingzoo", pettingzoo_available, '"game" needs PettingZoo on the runner (pip install "troupe[games]": pettingzoo and pygame)', "kind")
for _name in GAMES:
    register_game(GameKind(_name, lambda index, settings, max_turns, seed: GameEnvironment(settings, seed), PETTINGZOO))
# chess: played by chess.js in a Node server, as a remote environment (chess.py)
register_game(GameKind("chess", ChessEnvironment.from_chess_spec, Requirement("chess", chess_available, CHESS_MISSING, "game.name")))
