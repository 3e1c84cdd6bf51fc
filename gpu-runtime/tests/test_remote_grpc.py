"""Remote environments over gRPC (url "grpc://host:port"): the same protocol as HTTP against the reference
server, one server class on both transports, the same failure policy (deadline, crash, a dead server,
garbage), many sessions through one channel, and the committed descriptor against the .proto."""

import logging
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from remote_helpers import serve, serve_grpc

from troupe.envs.collaborative import Episode, Message, View
from troupe.envs.remote import grpc_wire
from troupe.envs.remote.client import RemoteFailure, connect
from troupe.envs.remote.environment import RemoteEnvironment
from troupe.envs.remote.grpc_server import generic_handler
from troupe.envs.remote.protocol import ResetReply, StepReply, transport_of
from troupe.envs.remote.server import EnvServer, load_environment

TESTS = Path(__file__).parent


def episodes(n, actors=("a",), start=2):
    out = []
    for k in range(n):
        e = Episode(k, k, 0, [], "", {}, {a: View() for a in actors}, row={"start": start})
        for view in e.views.values():
            view.extend([5, 6], own=True)  # as if the actor had spoken: tokens a failure must mask
        out.append(e)
    return out


def remote(url, timeout=5.0, actors=("a",)):
    env = RemoteEnvironment.from_spec({"name": "r", "url": url, "remote": {"timeoutSeconds": timeout, "failureScore": -0.5}}, 0)
    env.name, env.actors = "r", list(actors)
    return env


def countdown() -> EnvServer:
    return EnvServer(load_environment("troupe.remote.examples:Countdown", {}))


def play_countdown(url: str, server: EnvServer) -> list:
    """Three sessions of Countdown from 2: two count right, one says a wrong number. What each turn gave."""
    env = remote(url)
    eps = episodes(3)
    seen = [env.reset_many(eps), len(server.sessions), env.next_speaker(eps[0], 0)]
    replies = env.step_many([(e, Message("a", s, [], [])) for e, s in zip(eps, ["2", "2", "7"])])
    seen += [[[r.text for r in rs] for rs in replies], [e.done for e in eps], env.score(eps[2])]
    env.step_many([(e, Message("a", "1", [], [])) for e in eps[:2]])
    seen += [[e.done for e in eps], env.score(eps[0]), dict(server.sessions)]
    env.close()
    return seen


EXPECTED_PLAY = [
    ["count down from 2"] * 3, 3, "a",
    [["next"], ["next"], ["wrong"]], [False, False, True], {"a": {"environment": 0.0}},
    [True, True, True], {"a": {"environment": 1.0}}, {},  # a session ends when the environment reports done
]


def test_reference_server_plays_episodes_over_grpc():
    server = countdown()
    with serve_grpc(generic_handler(server)) as url:
        assert transport_of(url) == "grpc"
        assert play_countdown(url, server) == EXPECTED_PLAY


def test_one_environment_class_serves_both_transports_alike():
    """The same EnvServer behind HTTP and gRPC at once: the same episodes play the same way over each."""
    server = countdown()
    with serve(server.app()) as http_url, serve_grpc(generic_handler(server)) as grpc_url:
        assert play_countdown(http_url, server) == play_countdown(grpc_url, server) == EXPECTED_PLAY
        health = {}
        for url in (http_url, grpc_url):
            client = connect(url, 5.0)
            health[url[:4]] = client.call("health", {}, lambda d: d) if url.startswith("grpc") else None
            client.close()
    assert health["grpc"] == {"ok": True, "environment": "Countdown", "sessions": 0}


@pytest.mark.parametrize(
    "data",
    [
        {"messages": [{"text": "all", "to": None}, {"text": "nobody", "to": []}, {"text": "b only", "to": ["b"]}], "next": None, "done": False, "rewards": None},
        {"messages": [], "next": "b", "done": True, "rewards": {"a": {"game": 1.0, "legal_moves": 0.4}, "b": {}}},
    ],
)
def test_step_replies_keep_presence_through_the_wire(data):
    """Null is not empty: `to` unset (everyone) and [] (nobody) stay apart, so do `next` unset and set."""
    wire = grpc_wire.reply_message("step", data).SerializeToString()
    assert grpc_wire.reply_data("step", grpc_wire.StepReply.FromString(wire)) == data


def test_requests_round_trip_with_the_row_exact():
    body = {"session": "s1", "row": {"start": 3, "ratio": 0.5, "tags": ["x"], "nested": {"n": None}}, "actors": ["a", "b"], "sample": 2}
    wire = grpc_wire.request_message("reset", body).SerializeToString()
    back = grpc_wire.request_body("reset", grpc_wire.ResetRequest.FromString(wire))
    assert back == body and isinstance(back["row"]["start"], int)  # JSON text, not Struct: an int stays an int


# -- the failure policy, over gRPC ----------------------------------------------------------------------
def faulty_handler(behaviour: str) -> grpc.GenericRpcHandler:
    """A server of the service whose Step misbehaves; replies are raw bytes so garbage can be sent."""
    import asyncio

    async def reset(request: bytes, context):
        return grpc_wire.ResetReply(message="go").SerializeToString()

    async def step(request: bytes, context):
        if behaviour == "slow":
            await asyncio.sleep(3)
        if behaviour == "crash":
            await context.abort(grpc.StatusCode.INTERNAL, "ZeroDivisionError: division by zero")
        if behaviour == "unavailable":
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the environment is restarting")
        if behaviour == "not protobuf":
            return b"\xff\xff\xff\xff"
        if behaviour == "nan reward":
            return grpc_wire.StepReply(done=True, rewards={"a": grpc_wire.Rewards(components={"environment": math.nan})}).SerializeToString()
        if behaviour == "stranger":
            return grpc_wire.StepReply(next="mallory").SerializeToString()
        text = grpc_wire.StepRequest.FromString(request).text
        reply = grpc_wire.StepReply(done=True, rewards={"a": grpc_wire.Rewards(components={"environment": 1.0})})
        reply.messages.add(text=f"ok {text}")
        return reply.SerializeToString()

    handlers = {
        "Reset": grpc.unary_unary_rpc_method_handler(reset),
        "Step": grpc.unary_unary_rpc_method_handler(step),
    }
    return grpc.method_handlers_generic_handler(grpc_wire.SERVICE, handlers)


@pytest.mark.parametrize(
    "behaviour, cause",
    [
        ("slow", "timeout on gRPC Step: no reply within 1 s (DEADLINE_EXCEEDED)"),
        ("crash", "status on gRPC Step: INTERNAL: ZeroDivisionError: division by zero"),
        ("unavailable", "connection on gRPC Step: UNAVAILABLE: the environment is restarting"),
        ("not protobuf", "garbage on gRPC Step: not a Step reply (StepReply): Error parsing message"),
        ("nan reward", "garbage on gRPC Step: step reply.rewards.a.environment: expected a finite number, got nan"),
        ("stranger", 'garbage: next names "mallory", who is not one of the actors (a)'),
    ],
)
def test_a_failing_grpc_server_fails_only_that_episode(behaviour, cause, caplog):
    with serve_grpc(faulty_handler(behaviour)) as url:
        env = remote(url, timeout=1.0)
        eps = episodes(2)
        env.reset_many(eps)
        eps[1].done = True  # only episode 0 speaks this turn
        with caplog.at_level(logging.ERROR, logger="troupe.remote"):
            replies = env.step_many([(eps[0], Message("a", "x", [], [])), (eps[1], Message("a", "y", [], []))])
        env.close()
    assert replies == [None, None] and eps[0].done
    assert eps[0].views["a"].own == [0, 0]  # trains nothing
    assert eps[1].views["a"].own == [1, 1]  # the other episode is untouched
    assert env.score(eps[0]) == {"a": {"environment": -0.5}}
    assert env.failed == 1
    [line] = [r.getMessage() for r in caplog.records if r.name == "troupe.remote"]
    assert line.startswith('remote environment "r" (grpc://127.0.0.1:')
    assert "episode group 0 sample 0 failed at step 1: " + cause in line
    assert line.endswith("it trains nothing and scores failureScore -0.5")


def test_healthy_grpc_episodes_go_on_beside_a_failed_one():
    """One server answers; the other URL has nothing listening: only its episodes fail."""
    with serve_grpc(faulty_handler("ok")) as url:
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
    assert lost[0].done and lost[0].state["failed"].startswith("reset: connection on gRPC Reset: UNAVAILABLE")


def _start_envserver(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "troupe.envserver", *args], cwd=TESTS, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        raise AssertionError(f"the server did not start: {line}{proc.stdout.read()}")
    return proc, line.split(" on ", 1)[1].strip()


@pytest.mark.slow
def test_a_server_process_that_dies_mid_call_fails_the_episode():
    """The real envserver process, serving gRPC only, exits while a Step waits on it: UNAVAILABLE."""
    proc, url = _start_envserver("remote_helpers:Crasher", "--grpc", "0")
    try:
        assert url.startswith("grpc://127.0.0.1:") and " and " not in url
        env = remote(url, timeout=10.0)
        eps = episodes(1)
        assert env.reset_many(eps) == ["go"]
        started = time.monotonic()
        assert env.step_many([(eps[0], Message("a", "x", [], []))]) == [None]
        assert time.monotonic() - started < 5  # noticed when the connection dropped, not at the 10 s deadline
        assert proc.wait(10) == 3
        env.close()
    finally:
        proc.kill()
    assert eps[0].state["failed"].startswith("step 1: connection on gRPC Step: UNAVAILABLE")
    assert env.score(eps[0]) == {"a": {"environment": -0.5}}


@pytest.mark.slow
def test_the_cli_serves_both_transports_from_one_process():
    proc, urls = _start_envserver("troupe.remote.examples:Countdown", "--port", "0", "--grpc", "0")
    try:
        http_url, grpc_url = urls.split(" and ")
        assert http_url.startswith("http://127.0.0.1:") and grpc_url.startswith("grpc://127.0.0.1:")
        body = {"session": "s", "row": {"start": 1}, "actors": ["a"], "sample": 0}
        for url in (http_url, grpc_url):
            client = connect(url, 5.0)
            assert client.call("reset", {**body, "session": url}, ResetReply.parse) == ResetReply("count down from 1", "a", False)
            reply = client.call("step", {"session": url, "actor": "a", "text": "1"}, StepReply.parse)
            assert reply.done and reply.rewards == {"a": {"environment": 1.0}}
            client.close()
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_cli_prints_the_proto(capsys):
    from troupe.envs.remote.server import main

    assert main(["--print-proto"]) == 0
    out = capsys.readouterr().out
    assert "service Environment {" in out and "package troupe.remote.v1;" in out


# -- many sessions through one channel -----------------------------------------------------------------
def test_many_concurrent_sessions_share_one_channel():
    """500 sessions reset and play a whole Countdown together, every call in flight at once on one channel.
    500: a step of hundreds of episodes, as the bench's 1,000, at a size that stays quick here."""
    sessions = 500
    server = countdown()
    with serve_grpc(generic_handler(server)) as url:
        env = remote(url, timeout=30.0)
        eps = episodes(sessions, start=2)
        assert env.reset_many(eps) == ["count down from 2"] * sessions
        assert len(server.sessions) == sessions
        for said in ("2", "1"):
            replies = env.step_many([(e, Message("a", said, [], [])) for e in eps])
            assert all(r is not None for r in replies)
        channel = env.client._channel
        env.close()
    assert env.failed == 0 and all(e.done for e in eps) and server.sessions == {}
    assert {str(env.score(e)) for e in eps} == {"{'a': {'environment': 1.0}}"}
    assert channel is not None and list(env.client._calls) == ["reset", "step"]  # one channel, one callable per method


# -- the committed descriptor against the .proto (drift) ------------------------------------------------
def test_committed_descriptor_is_the_proto_compiled():
    """grpc_descriptor.py must be troupe_remote.proto compiled now; after editing the .proto run
    `.venv/bin/python -m troupe.remote.gen_proto`. Needs grpcio-tools (troupe[test]): a missing one fails."""
    from troupe.envs.remote import gen_proto
    from troupe.envs.remote.grpc_descriptor import SERIALIZED

    compiled = gen_proto.descriptor_from_proto()
    assert compiled == SERIALIZED, "troupe_remote.proto changed: run .venv/bin/python -m troupe.remote.gen_proto"
    assert gen_proto.render(compiled) == (Path(gen_proto.__file__).parent / "grpc_descriptor.py").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_http_path_never_imports_grpc():
    code = (
        "import sys\n"
        "from troupe.remote.environment import RemoteEnvironment\n"
        "import troupe.spec.support, troupe.host.capabilities\n"
        "troupe.host.capabilities.engine_versions()\n"
        "RemoteEnvironment.from_spec({'name': 'r', 'url': 'http://127.0.0.1:1'}, 0).close()\n"
        "assert 'grpc' not in sys.modules and 'google.protobuf' not in sys.modules, sorted(m for m in sys.modules if 'grpc' in m or 'protobuf' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_grpc_url_without_grpcio_is_refused_by_field(monkeypatch):
    from troupe.envs.remote import environment
    from troupe.spec import SpecError

    monkeypatch.setattr(environment, "grpc_available", lambda: False)
    with pytest.raises(SpecError) as e:
        RemoteEnvironment.from_spec({"name": "r", "url": "grpc://envhost:8101"}, 2)
    assert e.value.field == "environments.2.url"
    assert 'needs grpcio and protobuf on this host (pip install "troupe[grpc]")' in str(e.value)
    env = RemoteEnvironment()  # the same class as a `python` environment, url in its params
    env.params = {"url": "grpc://envhost:8101"}
    with pytest.raises(ValueError, match=r'params.url: a "grpc://" url needs grpcio'):
        env.setup()


@pytest.mark.parametrize("url, transport", [
    ("http://h:1", "http"), ("https://h/x", "http"), ("grpc://h:8101", "grpc"), ("grpc://h:8101/", "grpc"),
    ("grpc://h:8101/path", None), ("grpc://", None), ("ftp://h", None), (None, None),
])
def test_transport_of_follows_the_contracts_url_rule(url, transport):
    assert transport_of(url) == transport


def test_remote_failure_names_the_call_as_its_transport_does():
    assert str(RemoteFailure("timeout", "x", "step")) == "timeout on POST step: x"
    assert str(RemoteFailure("timeout", "x", "step", "grpc")) == "timeout on gRPC Step: x"
