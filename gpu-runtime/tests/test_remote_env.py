"""Remote environments: the protocol against the reference server, and the failure policy against
a server that times out, crashes, answers garbage or is gone."""

import asyncio
import logging

import pytest
from aiohttp import web
from remote_helpers import serve

from troupe.envs.collaborative import Episode, Message, View
from troupe.envs.remote.environment import RemoteEnvironment
from troupe.envs.remote.protocol import ProtocolError, StepReply
from troupe.envs.remote.server import EnvServer, load_environment
from troupe.spec import SpecError


def episodes(n, actors=("a",)):
    out = []
    for k in range(n):
        e = Episode(k, k, 0, [], "", {}, {a: View() for a in actors}, row={"start": 2})
        for view in e.views.values():
            view.extend([5, 6], own=True)  # as if the actor had spoken: tokens a failure must mask
        out.append(e)
    return out


def remote(url, timeout=5.0, actors=("a",)):
    env = RemoteEnvironment.from_spec({"name": "r", "url": url, "remote": {"timeoutSeconds": timeout, "failureScore": -0.5}}, 0)
    env.name, env.actors = "r", list(actors)
    return env


def test_reference_server_plays_episodes_to_their_rewards():
    server = EnvServer(load_environment("troupe.remote.examples:Countdown", {}))
    with serve(server.app()) as url:
        env = remote(url)
        eps = episodes(3)
        assert env.reset_many(eps) == ["count down from 2"] * 3
        assert len(server.sessions) == 3
        assert env.next_speaker(eps[0], 0) == "a"
        said = ["2", "2", "7"]
        replies = env.step_many([(e, Message("a", s, [], [])) for e, s in zip(eps, said)])
        assert [[r.text for r in rs] for rs in replies] == [["next"], ["next"], ["wrong"]]
        assert [e.done for e in eps] == [False, False, True]
        assert env.score(eps[2]) == {"a": {"environment": 0.0}}
        env.step_many([(e, Message("a", "1", [], [])) for e in eps[:2]])
        assert all(e.done for e in eps) and env.score(eps[0]) == {"a": {"environment": 1.0}}
        assert server.sessions == {}  # a session ends when the environment reports done
        env.close()


def faulty_app(behaviour: str) -> web.Application:
    async def reset(request):
        return web.json_response({"message": "go", "next": None, "done": False})

    async def step(request):
        body = await request.json()
        if behaviour == "slow":
            await asyncio.sleep(3)
        if behaviour == "crash":
            return web.json_response({"error": "ZeroDivisionError: division by zero"}, status=500)
        if behaviour == "not json":
            return web.Response(text="<html>oops</html>", content_type="text/html")
        if behaviour == "bad field":
            return web.json_response({"messages": [{"text": 3}], "done": False})
        if behaviour == "stranger":
            return web.json_response({"messages": [], "next": "mallory", "done": False})
        return web.json_response({"messages": [{"text": f"ok {body['text']}"}], "done": True, "rewards": {"a": 1}})

    app = web.Application()
    app.router.add_post("/reset", reset)
    app.router.add_post("/step", step)
    return app


@pytest.mark.parametrize(
    "behaviour, cause",
    [
        ("slow", "timeout on POST step: no reply within 1 s"),
        ("crash", "status on POST step: HTTP 500: ZeroDivisionError: division by zero"),
        ("not json", "garbage on POST step: not JSON: '<html>oops</html>'"),
        ("bad field", "garbage on POST step: step reply.messages.0.text: expected a string, got int"),
        ("stranger", 'garbage: next names "mallory", who is not one of the actors (a)'),
    ],
)
def test_a_failing_server_fails_only_that_episode(behaviour, cause, caplog):
    with serve(faulty_app(behaviour)) as url:
        env = remote(url, timeout=1.0)
        eps = episodes(1)
        env.reset_many(eps)
        with caplog.at_level(logging.ERROR, logger="troupe.remote"):
            replies = env.step_many([(eps[0], Message("a", "x", [], []))])
        env.close()
    assert replies == [None] and eps[0].done
    assert eps[0].views["a"].own == [0, 0]  # trains nothing
    assert env.score(eps[0]) == {"a": {"environment": -0.5}}
    assert env.failed == 1
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith('remote environment "r" (http://127.0.0.1:')
    assert "episode group 0 sample 0 failed at step 1: " + cause in line
    assert line.endswith("it trains nothing and scores failureScore -0.5")


def test_healthy_episodes_go_on_beside_a_failed_one():
    """One server answers; the other URL has nothing listening: only its episodes fail."""
    with serve(faulty_app("ok")) as url:
        good = remote(url)
        eps = episodes(2)
        good.reset_many(eps)
        replies = good.step_many([(e, Message("a", str(k), [], [])) for k, e in enumerate(eps)])
        good.close()
    assert [[r.text for r in rs] for rs in replies] == [["ok 0"], ["ok 1"]]
    assert good.score(eps[0]) == {"a": {"environment": 1.0}}
    gone = remote(url, timeout=2.0)  # the server above has stopped: connection refused
    lost = episodes(1)
    gone.reset_many(lost)
    gone.close()
    assert lost[0].done and lost[0].state["failed"].startswith("reset: connection on POST reset")


def test_reference_server_refuses_bad_requests_by_field():
    server = EnvServer(load_environment("troupe.remote.examples:Countdown", {}))
    with pytest.raises(ProtocolError, match="reset.session: expected a string"):
        server.reset({"actors": ["a"]})
    with pytest.raises(KeyError):
        server.step({"session": "nope", "actor": "a", "text": "1"})
    with pytest.raises(ProtocolError, match=r"step reply.rewards.a: expected a finite number"):
        StepReply.parse({"rewards": {"a": "high"}})


def test_url_is_required_with_its_field():
    with pytest.raises(SpecError) as e:
        RemoteEnvironment.from_spec({"name": "r"}, 3)
    assert e.value.field == "environments.3.url"
