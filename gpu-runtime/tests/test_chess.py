"""`game: {name: "chess"}`: chess played by chess.js in the Node server the runtime starts (packages/chess-env),
as a remote environment: a run against the random legal player and two actors against each other. The rules themselves (fool's mate, stalemate, illegal moves) are tested beside the server
(packages/chess-env/test/chess.test.ts)."""

from __future__ import annotations

import pytest
from runtime_helpers import TEST_THREADS

from troupe import EventWriter, run_spec
from troupe.games.chess import chess_available

pytestmark = pytest.mark.skipif(not chess_available(), reason="needs node and chess.js (npm ci installs packages/chess-env)")


def chess_spec(steps: int, game: dict, actors: list[str] | None = None, tokens: int = 3, seed: int = 5) -> dict:
    actors = actors or ["player"]
    return {
        "specVersion": 1,
        "name": "chess",
        "seed": seed,
        "actors": [
            {"name": name, "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": True, "training": {"learningRate": 3e-3},
             "sampling": {"temperature": 1.0, "maxNewTokens": tokens}}
            for name in actors
        ],
        "datasets": [{"name": "rows", "source": {"kind": "builtin", "name": "echo_letter", "size": 64}}],
        "rewards": [],
        "environments": [{"name": "chess", "kind": "game", "dataset": "rows", "actors": actors, "maxTurns": 4,
                          "prompt": {"field": "prompt", "applyChatTemplate": False}, "game": {"name": "chess", **game}}],
        "algorithm": {"name": "grpo", "groupSize": 8},
        "trainer": {"steps": steps, "promptsPerStep": 4, "episodesPerStep": 32, "cpuThreads": TEST_THREADS, "device": "cpu"},
    }


def test_a_run_against_the_random_legal_player_shows_the_board_and_scores_forfeits(tmp_path):
    result = run_spec(chess_spec(2, {"opponent": "random", "actorPlays": "alternate", "legalMoveReward": 0.1}), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert len(episodes) == 64
    for e in episodes:
        environment = [m for m in e["messages"] if m["role"] == "environment"]
        assert environment and not any(m["trained"] for m in environment)
        opening = e["messages"][0]["content"] if e["messages"][0]["role"] == "environment" else environment[0]["content"]
        assert "FEN " in opening or "FEN " in environment[0]["content"]  # the board is in the transcript
        last = environment[-1]["content"]
        game = e["rewardComponents"]["game"]
        if "forfeits" in last:
            assert game == -1.0  # the offender; the random player is no actor
        assert game in (-1.0, 0.0, 1.0)
    # A random 3-character answer is rarely a legal move: most games end in a forfeit at once.
    assert sum("forfeits" in [m for m in e["messages"] if m["role"] == "environment"][-1]["content"] for e in episodes) > 32
    # The server is stopped with the run.
    import subprocess

    assert "server.mjs" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_two_actors_play_each_other_white_first(tmp_path):
    result = run_spec(chess_spec(1, {"opponent": "actors"}, actors=["white", "black"]), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    for e in (e for e in result.events if e["type"] == "episode"):
        assert "white plays white, black plays black" in "".join(m["content"] for m in e["messages"])
        spoke = [m["actor"] for m in e["messages"] if m["role"] == "assistant"]
        assert spoke[:1] == ["white"] and spoke == ["white", "black"] * (len(spoke) // 2) + ["white"] * (len(spoke) % 2)
        white, black = e["rewardComponents"]["white/game"], e["rewardComponents"]["black/game"]
        assert sorted([white, black]) in ([-1.0, 0.0], [0.0, 0.0], [-1.0, 1.0])
