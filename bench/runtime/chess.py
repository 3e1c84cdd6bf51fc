"""Chess against the random legal player: does GRPO learn to play legal moves, and how does it score?

    python bench/runtime/chess.py [--steps 60] [--seed 5] [--max-turns 3] [--prompts 4] [--group 8] [--format index]

A tiny random-init character model (tiny-char-2l) plays `game: {name: "chess", opponent: "random", actorPlays:
"alternate", moveFormat: "index", cutoff: "material"}`: the legal moves are listed numbered under the board, the
model answers with a number; a game reaching `maxTurns` of its moves is adjudicated by material; each legal
move earns `legalMoveReward` (component `legal_moves`): with forfeits at first in every game, the game result alone
is -1 in every sample of a group and GRPO's advantages are all zero, so the shaping is what starts learning. Per step it
prints the forfeit rate (games lost by an unreadable or out-of-range answer) and the score against the random
player (win 1, draw 0.5, loss or forfeit 0) over every game of the step, from the chess environment's metrics.
Before any update (step 1's games, sampled by the untrained model) is the untrained policy's line.

`--format san` is the same run with SAN answers (the model must write `e4`, `Nf3`): the contrast with the index
format, where a random-init character model has no signal.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu-runtime" / "src"))

from troupe import EventWriter, run_spec  # noqa: E402


def chess_spec(steps: int, seed: int, max_turns: int, prompts: int, group: int, move_format: str, legal_bonus: float) -> dict:
    return {
        "specVersion": 1,
        "name": "chess-vs-random",
        "seed": seed,
        "actors": [{"name": "player", "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": True,
                    "training": {"learningRate": 3e-3, "maxGradNorm": 1.0}, "sampling": {"temperature": 1.0, "maxNewTokens": 2}}],
        "datasets": [{"name": "rows", "source": {"kind": "builtin", "name": "echo_letter", "size": 64}}],
        "rewards": [],
        "environments": [{"name": "chess", "kind": "game", "dataset": "rows", "actors": ["player"], "maxTurns": max_turns,
                          "prompt": {"field": "prompt", "applyChatTemplate": False},
                          "game": {"name": "chess", "opponent": "random", "actorPlays": "alternate", "moveFormat": move_format, "cutoff": "material",
                                   "legalMoveReward": legal_bonus}}],
        "algorithm": {"name": "grpo", "groupSize": group},
        "trainer": {"steps": steps, "promptsPerStep": prompts, "episodesPerStep": 2, "cpuThreads": 1, "device": "cpu"},
    }


def curves(result) -> dict[str, list[float]]:
    return {name: result.metrics(f"chess/{name}", actor="player") for name in ("forfeit_rate", "score", "moves")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--format", default="index", choices=["index", "san"])
    parser.add_argument("--legal-move-reward", type=float, default=0.25)
    args = parser.parse_args()
    spec = chess_spec(args.steps, args.seed, args.max_turns, args.prompts, args.group, args.format, args.legal_move_reward)
    started = time.monotonic()
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=Path(tempfile.mkdtemp(prefix="chess-bench-")))
    seconds = time.monotonic() - started
    if result.state != "succeeded":
        raise SystemExit(f"run {result.state}: {result.message}")
    c = curves(result)
    window = max(1, args.steps // 6)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    print(json.dumps({
        "seconds": round(seconds, 1), "games_per_step": args.prompts * args.group, "format": args.format,
        "untrained (step 1)": {"forfeit_rate": c["forfeit_rate"][0], "score": c["score"][0]},
        f"first {window} steps": {"forfeit_rate": round(mean(c["forfeit_rate"][:window]), 3), "score": round(mean(c["score"][:window]), 3)},
        f"last {window} steps": {"forfeit_rate": round(mean(c["forfeit_rate"][-window:]), 3), "score": round(mean(c["score"][-window:]), 3),
                                 "moves": round(mean(c["moves"][-window:]), 2)},
        "forfeit_rate": [round(x, 3) for x in c["forfeit_rate"]],
        "score": [round(x, 3) for x in c["score"]],
    }, indent=1))


if __name__ == "__main__":
    main()
