"""A run against a remote environment: the reference server serves tic-tac-toe over HTTP, the run's
episodes are its sessions. A server that fails some steps fails those episodes only: logged, scored
failureScore, and the run goes on."""

import itertools

import pytest
from aiohttp import web
from remote_helpers import serve
from runtime_helpers import TEST_THREADS

from troupe import EventWriter, run_spec
from troupe.remote.server import EnvServer, load_environment


def remote_spec(url: str, steps: int = 2) -> dict:
    return {
        "specVersion": 1,
        "name": "remote tic-tac-toe",
        "seed": 5,
        "actors": [
            {"name": "player", "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": True,
             "training": {"learningRate": 3e-3}, "sampling": {"temperature": 1.0, "maxNewTokens": 1}}
        ],
        "datasets": [{"name": "rows", "source": {"kind": "builtin", "name": "echo_letter", "size": 16}}],
        "rewards": [],
        "environments": [
            {"name": "remote", "kind": "remote", "url": url, "remote": {"timeoutSeconds": 5, "failureScore": -2},
             "dataset": "rows", "actors": ["player"], "maxTurns": 5, "prompt": {"field": "prompt", "applyChatTemplate": False}}
        ],
        "algorithm": {"name": "grpo", "groupSize": 4},
        "trainer": {"steps": steps, "promptsPerStep": 2, "episodesPerStep": 8, "cpuThreads": TEST_THREADS, "device": "cpu"},
    }


def game_server() -> EnvServer:
    return EnvServer(load_environment("troupe.games.environment:GameEnvironment", {"name": "tic_tac_toe", "legalMoveReward": 0.2}, ["player"], "ttt"))


@pytest.mark.slow
def test_a_run_plays_its_episodes_on_the_remote_server(tmp_path):
    server = game_server()
    with serve(server.app()) as url:
        result = run_spec(remote_spec(url), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert len(episodes) == 16
    for e in episodes:
        assert e["messages"][0]["content"].startswith("tic_tac_toe (1-9, row by row): player is X.")  # the server's opening
        assert e["messages"][-1]["role"] == "environment" and not e["messages"][-1]["trained"]
        assert "game" in e["rewardComponents"]


def flaky(server: EnvServer, every: int) -> web.Application:
    """The reference server, but every `every`-th step answers HTTP 500 (a crashing environment)."""
    count = itertools.count(1)
    inner = server.app()

    @web.middleware
    async def crash(request, handler):
        if request.path == "/step" and next(count) % every == 0:
            return web.json_response({"error": "RuntimeError: the environment crashed"}, status=500)
        return await handler(request)

    inner.middlewares.append(crash)
    return inner


@pytest.mark.slow
def test_failed_episodes_are_logged_scored_and_the_run_goes_on(tmp_path):
    with serve(flaky(game_server(), every=3)) as url:
        result = run_spec(remote_spec(url, steps=3), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    lines = [e["message"] for e in result.events if e["type"] == "log" and e["level"] == "error"]  # in the run's own log
    failed_lines = [line for line in lines if "status on POST step: HTTP 500: RuntimeError: the environment crashed" in line]
    assert failed_lines, lines
    assert all("it trains nothing and scores failureScore -2" in line for line in failed_lines)
    episodes = [e for e in result.events if e["type"] == "episode"]
    failed = [e for e in episodes if e["rewardComponents"].get("environment") == -2.0]
    assert failed and len(failed) < len(episodes)  # some episodes failed, the others played on
    assert len({e["step"] for e in episodes}) == 3
