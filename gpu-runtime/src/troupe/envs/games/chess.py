"""`game: {name: "chess"}`: chess between an actor and the random player, or between two actors, played by
chess.js in a Node server that speaks Troupe's remote protocol (packages/chess-env/src/server.mjs). No Python
chess package is reachable on our machines; the npm registry has chess.js, well kept and exact about the rules,
and the remote protocol lets an environment live in any language.

The runtime starts the server for the run (`node server.mjs --port 0 ...`, loopback only, stopped with the run)
and plays it as a remote environment: the rules, the random player, forfeits and outcomes are the server's; the
transcript shows the board (FEN, or an ASCII diagram) after every move. Moves are SAN (`Nf3`, `O-O`) or
coordinates (`g1f3`), the first move-like word of the message; an illegal or missing move forfeits (the offender
-1, its opponent 0). Rewards, component `game`: win 1, draw 0, loss -1; `legalMoveReward` per legal move
(component `legal_moves`). A game reaching the environment's `maxTurns` moves of one actor is cut off: a draw, or
with `cutoff: "material"` won by the side ahead in material (pawn 1, knight and bishop 3, rook 5, queen 9).
`moveFormat: "index"`: the legal moves are listed numbered under every board and the answer is a number from the
list (the first number in the message; out of range or none forfeits), for models that cannot yet write SAN.

Where the server lives: TROUPE_CHESS_SERVER (a path to server.mjs), else the checkout this package runs from
(`packages/chess-env/src/server.mjs` beside `gpu-runtime/`), with chess.js resolved from its node_modules.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, Sequence

from ..remote.client import connect
from ..remote.environment import RemoteEnvironment
from ...spec import SpecError

START_TIMEOUT_S = 30.0


def chess_server_path() -> Path | None:
    configured = os.environ.get("TROUPE_CHESS_SERVER")
    if configured:
        path = Path(configured)
        return path if path.is_file() else None
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "packages" / "chess-env" / "src" / "server.mjs"
        if candidate.is_file():
            return candidate
    return None


def chess_js_version() -> str | None:
    """The chess.js the server would import (node's resolution: node_modules folders upward), with node on PATH."""
    server = chess_server_path()
    if server is None or shutil.which("node") is None:
        return None
    for folder in server.parents:
        manifest = folder / "node_modules" / "chess.js" / "package.json"
        if manifest.is_file():
            try:
                return str(json.loads(manifest.read_text(encoding="utf-8")).get("version") or "unknown")
            except (OSError, ValueError):
                return "unknown"
    return None


def chess_available() -> bool:
    return chess_js_version() is not None


CHESS_ONLY = ("moveFormat", "cutoff")  # game settings only chess reads (contracts GameEnvironmentSettings)


def chess_setting_issues(settings: dict[str, Any], path: str) -> list[tuple[str, str]]:
    """(field, message) for chess-only settings on another game, in the contracts' words."""
    if settings.get("name") == "chess":
        return []
    return [(f"{path}.game.{name}", f"only chess takes {name}") for name in CHESS_ONLY if settings.get(name) is not None]


CHESS_MISSING = (
    'chess needs Node.js and chess.js on the runner (the chess environment server, packages/chess-env: npm install; '
    "or set TROUPE_CHESS_SERVER to its server.mjs)"
)


class ChessEnvironment(RemoteEnvironment):
    """A remote environment whose server this environment starts and stops."""

    speaker = "chess"

    def __init__(self, settings: dict[str, Any], max_actor_moves: int, seed: int, timeout_s: float = 30.0) -> None:
        super().__init__(None, timeout_s, failure_score=0.0)
        self.settings = settings
        self.max_actor_moves = max_actor_moves
        self.seed = seed
        self.process: subprocess.Popen[str] | None = None

    @classmethod
    def from_chess_spec(cls, index: int, settings: dict[str, Any], max_turns: int, seed: int) -> ChessEnvironment:
        if not chess_available():
            raise SpecError.at(f"environments.{index}.game.name", CHESS_MISSING)
        return cls(settings, max_turns, seed)

    def command(self) -> list[str]:
        server = chess_server_path()
        node = shutil.which("node")
        assert server is not None and node is not None, CHESS_MISSING
        s = self.settings
        argv = [node, str(server), "--port", "0", "--host", "127.0.0.1", "--opponent", s["opponent"], "--actor-plays", s["actorPlays"],
                "--legal-move-reward", repr(float(s["legalMoveReward"])), "--max-actor-moves", str(self.max_actor_moves),
                "--board", s.get("board") or "fen", "--seed", str(self.seed % 2**31)]
        argv += ["--move-format", s.get("moveFormat") or "san", "--cutoff", s.get("cutoff") or "draw"]
        return argv + (["--show-legal-moves"] if s.get("showLegalMoves") else [])

    def setup(self) -> None:
        self.process = subprocess.Popen(self.command(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                                        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline() if self.process and self.process.stdout else ""), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
        first = line[0].strip() if line else ""
        if not first.startswith("listening on "):
            self.close()
            raise RuntimeError(f"the chess server did not start: {first or 'no answer'} (command: {' '.join(self.command())})")
        self.url = first.removeprefix("listening on ")
        self.client = connect(self.url, self.timeout_s)

    def metrics(self, episodes: Sequence[Any]) -> dict[str, float]:
        """The remote session metrics, and per actor (`chess/<actor>/...`, reported as that actor's `chess/...`):
        `score` (win 1, draw 0.5, loss or forfeit 0: the usual score against the opponent), `forfeit_rate` (games
        the actor lost by an illegal or unreadable move) and `moves` (the actor's moves per game, forfeits too)."""
        out = super().metrics(episodes)
        for actor in self.actors:
            games = [e for e in episodes if "game" in (e.state.get("rewards") or {}).get(actor, {})]
            if not games:
                continue
            results = [float(e.state["rewards"][actor]["game"]) for e in games]
            forfeits = [e for e in games if forfeited(e, actor)]
            out[f"chess/{actor}/score"] = sum((r + 1.0) / 2.0 for r in results) / len(games)
            out[f"chess/{actor}/forfeit_rate"] = len(forfeits) / len(games)
            out[f"chess/{actor}/moves"] = sum(len(e.own_messages(actor)) for e in games) / len(games)
        return out

    def close(self) -> None:
        super().close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


def forfeited(episode: Any, actor: str) -> bool:
    """Whether `actor` lost this game by its own last move: the server's final message says which side forfeits,
    and it is always the side whose move was unreadable, the one that spoke last."""
    last = next((m for m in reversed(episode.messages) if m.role == "environment"), None)
    spoke = next((m for m in reversed(episode.messages) if m.role == "assistant"), None)
    return last is not None and spoke is not None and spoke.actor == actor and " forfeits" in last.text.split("\n")[0]
