"""Remote environments at scale (#28 item 3): a real aiohttp server on a free local port counts the calls it
has in flight; the runtime's client must hold `maxConcurrentSessions`, fail a session past its
`sessionTimeoutSeconds` as a timeout scoring `failureScore`, count it in the step's metrics, and fail
nothing else."""

import asyncio

import pytest
from aiohttp import web
from remote_helpers import serve

from troupe.collaborative import Episode, Message, View
from troupe.remote.environment import RemoteEnvironment
from troupe.remote.gate import SessionLimits


def episodes(n, actors=("a",)):
    out = []
    for k in range(n):
        e = Episode(k, k, 0, [], "", {}, {a: View() for a in actors}, row={"start": 3, "slow": k == 0})
        for view in e.views.values():
            view.extend([5, 6], own=True)
        out.append(e)
    return out


def remote(url, **settings):
    env = RemoteEnvironment.from_spec({"name": "r", "url": url, "remote": {"timeoutSeconds": 5, "failureScore": -0.5, **settings}}, 0)
    env.name, env.actors = "r", ["a"]
    return env


def counting_app(delay_s: float, slow_delay_s: float = 0.0):
    """Three-turn sessions; every call sleeps `delay_s` (a session reset with row.slow: `slow_delay_s`)
    while the server counts how many calls it has in flight at once."""
    seen = {"now": 0, "peak": 0, "calls": 0}
    slow: set[str] = set()
    turns: dict[str, int] = {}

    async def hold(session):
        seen["now"] += 1
        seen["calls"] += 1
        seen["peak"] = max(seen["peak"], seen["now"])
        try:
            await asyncio.sleep(slow_delay_s if session in slow else delay_s)
        finally:
            seen["now"] -= 1

    async def reset(request):
        body = await request.json()
        if body["row"].get("slow"):
            slow.add(body["session"])
        turns[body["session"]] = body["row"]["start"]
        await hold(body["session"])
        return web.json_response({"message": "go", "next": None, "done": False})

    async def step(request):
        body = await request.json()
        await hold(body["session"])
        turns[body["session"]] -= 1
        done = turns[body["session"]] == 0
        return web.json_response({"messages": [{"text": "ok"}], "done": done, "rewards": {"a": 1.0} if done else None})

    app = web.Application()
    app.router.add_post("/reset", reset)
    app.router.add_post("/step", step)
    return app, seen


def play(env, eps, turns=3):
    env.reset_many(eps)
    for _ in range(turns):
        env.step_many([(e, Message("a", "x", [], [])) for e in eps if not e.done])


def test_the_server_never_sees_more_sessions_in_flight_than_the_limit():
    app, seen = counting_app(delay_s=0.02)
    with serve(app) as url:
        env = remote(url, maxConcurrentSessions=8)
        eps = episodes(200)
        play(env, eps)
        env.close()
    assert seen["calls"] == 200 * 4  # every reset and step arrived: queued, not dropped
    assert seen["peak"] == 8  # the limit was reached (200 were fired together) and never passed
    assert all(e.done and "failed" not in e.state for e in eps)
    assert env.metrics(eps) == {"remote/failed_sessions": 0.0, "remote/timeouts": 0.0}
    assert env.client.gate.queued_peak > 8  # the rest waited in the runner: back-pressure


def test_time_in_the_queue_does_not_count_against_a_call_timeout():
    # 20 sessions, 2 at a time, 0.2 s a call: the last reset waits ~1.8 s for its turn, past timeoutSeconds 0.5.
    # It must not fail: the call's deadline starts when it leaves the runner's queue (a connection pool alone
    # would time it out while it waits there).
    app, seen = counting_app(delay_s=0.2)
    with serve(app) as url:
        env = remote(url, timeoutSeconds=0.5, maxConcurrentSessions=2)
        eps = episodes(20)
        env.reset_many(eps)
        env.close()
    assert seen["peak"] == 2 and seen["calls"] == 20
    assert [e.state.get("failed") for e in eps] == [None] * 20


def test_without_a_setting_the_limit_is_the_default_and_the_pool_follows_it():
    env = RemoteEnvironment.from_spec({"name": "r", "url": "http://127.0.0.1:9", "remote": {}}, 0)
    assert env.client.gate.limits == SessionLimits(256, None)
    assert env.client.max_connections == 256
    env.close()


def test_a_slow_session_runs_past_its_budget_scores_failure_and_is_counted():
    # Session 0 takes 0.4 s a call: its reset and first step fit a 1 s budget, its second step runs past it
    # (each call alone is far inside timeoutSeconds 5). The other 19 take 0.01 s a call and finish.
    app, seen = counting_app(delay_s=0.01, slow_delay_s=0.4)
    logged = []
    with serve(app) as url:
        env = remote(url, maxConcurrentSessions=4, sessionTimeoutSeconds=1.0)
        env.log_sink = lambda level, text: logged.append((level, text))
        eps = episodes(20)
        play(env, eps)
        env.close()
    slow, rest = eps[0], eps[1:]
    assert slow.done and slow.state["failure_kind"] == "timeout"
    assert "sessionTimeoutSeconds" in slow.state["failed"] and slow.state["failed"].startswith("step 2")
    assert env.score(slow) == {"a": {"environment": -0.5}}
    assert all(v.own == [0, 0] for v in slow.views.values())  # trains nothing
    assert [(e.done, e.state.get("failed"), env.score(e)) for e in rest] == [(True, None, {"a": {"environment": 1.0}})] * 19
    assert env.metrics(eps) == {"remote/failed_sessions": 1.0, "remote/timeouts": 1.0}
    assert [level for level, _ in logged] == ["error"] and "group 0 sample 0" in logged[0][1]
    assert env.client.gate._spent == {}  # every session ended: no budget kept


def test_a_per_call_timeout_is_counted_as_a_timeout_too():
    app, _ = counting_app(delay_s=0.01, slow_delay_s=1.5)
    with serve(app) as url:
        env = remote(url, timeoutSeconds=0.5, maxConcurrentSessions=16)
        eps = episodes(5)
        play(env, eps)
        env.close()
    assert eps[0].state["failure_kind"] == "timeout" and eps[0].state["failed"].startswith("reset")
    assert env.metrics(eps) == {"remote/failed_sessions": 1.0, "remote/timeouts": 1.0}
    assert all("failed" not in e.state for e in eps[1:])


@pytest.mark.parametrize("settings, field", [({"maxConcurrentSessions": 0}, "maxConcurrentSessions"), ({"sessionTimeoutSeconds": -1}, "sessionTimeoutSeconds")])
def test_bad_limits_are_refused_by_name(settings, field):
    with pytest.raises(ValueError, match=field):
        remote("http://127.0.0.1:9", **settings)


def test_over_grpc_the_gate_holds_the_limit_and_deadlines_start_after_the_queue():
    """The same gate in front of gRPC calls (one channel, no connection pool to lean on): the reference server
    behind a handler that counts calls in flight and makes each take 0.2 s. 20 sessions, 2 at a time, a 0.5 s
    deadline per call: the last waits ~1.8 s in the queue and must still succeed."""
    grpc = pytest.importorskip("grpc", reason="gRPC is an extra (troupe[grpc])")
    from remote_helpers import serve_grpc

    from troupe.remote.grpc_wire import METHODS, SERVICE, reply_message, request_body
    from troupe.remote.server import EnvServer, load_environment

    server = EnvServer(load_environment("troupe.remote.examples:Countdown", {}))
    seen = {"now": 0, "peak": 0, "calls": 0}

    def handler(route):
        async def handle(request, context):
            seen["now"] += 1
            seen["calls"] += 1
            seen["peak"] = max(seen["peak"], seen["now"])
            try:
                await asyncio.sleep(0.2)
            finally:
                seen["now"] -= 1
            body = request_body(route, request)
            return reply_message(route, server.reset(body) if route == "reset" else server.step(body))

        return handle

    generic = grpc.method_handlers_generic_handler(
        SERVICE,
        {
            name: grpc.unary_unary_rpc_method_handler(handler(route), request_deserializer=request_type.FromString, response_serializer=lambda m: m.SerializeToString())
            for route, (name, request_type, _) in METHODS.items()
        },
    )
    with serve_grpc(generic) as url:
        env = remote(url, timeoutSeconds=0.5, maxConcurrentSessions=2)
        eps = episodes(20)
        for e in eps:
            e.row = {"start": 1}
        env.reset_many(eps)
        env.step_many([(e, Message("a", "1", [], [])) for e in eps])
        env.close()
    assert seen["peak"] == 2 and seen["calls"] == 40
    assert [(e.done, e.state.get("failed")) for e in eps] == [(True, None)] * 20
    assert env.metrics(eps) == {"remote/failed_sessions": 0.0, "remote/timeouts": 0.0}
