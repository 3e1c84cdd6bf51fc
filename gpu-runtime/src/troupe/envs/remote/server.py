"""The reference server of the remote protocol (protocol.py): serves any `troupe.Environment`
subclass over HTTP and/or gRPC (grpc_server.py), one session per episode, many sessions at once.

    python -m troupe.envserver my_envs:Guess --port 8100 [--params '{"k": 1}'] [--session-ttl 600]
    python -m troupe.envserver my_envs:Guess --grpc 8101              # gRPC only
    python -m troupe.envserver my_envs:Guess --port 8100 --grpc 8101  # both, one table of sessions
    python -m troupe.envserver --print-proto > troupe_remote.proto    # to write a server in another language

The environment's methods run on the server's event loop, one request at a time: keep `reset`,
`step` and `score` quick (or make the class's own work asynchronous behind them). A session ends
when the environment reports `done` (or `/close`, or after `--session-ttl` seconds idle).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from ..collaborative import Episode, Message
from ..environment_api import Environment, Reply
from .protocol import ProtocolError, ResetRequest, StepRequest


@dataclass
class Session:
    episode: Episode
    turn: int = 0
    touched: float = field(default_factory=time.monotonic)


def _replies(reply: Any) -> list[dict[str, Any]]:
    if reply is None:
        return []
    items = reply if isinstance(reply, list) else [reply]
    return [{"text": r.text, "to": r.to} if isinstance(r, Reply) else {"text": str(r), "to": None} for r in items]


def _rewards(env: Environment, episode: Episode) -> dict[str, dict[str, float]]:
    given = dict(episode.env_rewards)
    for actor, value in (env.score(episode) or {}).items():
        given[actor] = {k: float(v) for k, v in value.items()} if isinstance(value, dict) else {"environment": float(value)}
    return given


class EnvServer:
    def __init__(self, env: Environment, session_ttl_s: float = 600.0) -> None:
        self.env = env
        self.sessions: dict[str, Session] = {}
        self.session_ttl_s = session_ttl_s
        self._swept = time.monotonic()

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept < 10:
            return
        self._swept = now
        for key in [k for k, s in self.sessions.items() if now - s.touched > self.session_ttl_s]:
            del self.sessions[key]

    def _next(self, session: Session) -> str | None:
        e = session.episode
        return None if e.done else self.env.next_speaker(e, session.turn)

    def reset(self, body: Any) -> dict[str, Any]:
        self._sweep()
        req = ResetRequest.parse(body)
        self.env.actors = req.actors
        episode = Episode(0, 0, req.sample, [], "", {}, {}, row=req.row)
        session = Session(episode)
        self.sessions[req.session] = session
        message = self.env.reset(episode)
        if isinstance(message, list):  # Environment.reset may add messages after its opening; this protocol has none
            raise TypeError("reset returned messages after its opening: the remote protocol's reset answers one opening message")
        nxt = self._next(session)
        done = episode.done or nxt is None
        if done:
            self.sessions.pop(req.session, None)
        return {"message": message, "next": nxt, "done": done}

    def step(self, body: Any) -> dict[str, Any]:
        req = StepRequest.parse(body)
        session = self.sessions.get(req.session)
        if session is None:
            raise KeyError(f'no session "{req.session}" (ended, closed, expired or never reset)')
        session.touched = time.monotonic()
        message = Message(req.actor, req.text, [], [])
        session.episode.messages.append(message)
        session.turn += 1
        replies = _replies(self.env.step(session.episode, message))
        nxt = self._next(session)
        done = session.episode.done or nxt is None
        out: dict[str, Any] = {"messages": replies, "next": nxt, "done": done, "rewards": None}
        if done:
            out["rewards"] = _rewards(self.env, session.episode)
            self.sessions.pop(req.session, None)
        return out

    def close(self, body: Any) -> dict[str, Any]:
        return {"closed": self.sessions.pop(str((body or {}).get("session")), None) is not None}

    def health(self) -> dict[str, Any]:
        return {"ok": True, "environment": type(self.env).__name__, "sessions": len(self.sessions)}

    def app(self) -> web.Application:
        async def handle(request: web.Request) -> web.Response:
            route = request.match_info["route"]
            try:
                body = await request.json()
            except ValueError:
                return web.json_response({"error": "the body is not JSON"}, status=400)
            try:
                if route == "reset":
                    return web.json_response(self.reset(body))
                if route == "step":
                    return web.json_response(self.step(body))
                if route == "close":
                    return web.json_response(self.close(body))
            except ProtocolError as e:
                return web.json_response({"error": str(e)}, status=400)
            except KeyError as e:
                return web.json_response({"error": str(e.args[0])}, status=404)
            except Exception as e:  # the environment's own code failed: say so, keep serving
                return web.json_response({"error": f"{type(e).__name__}: {e}"}, status=500)
            return web.json_response({"error": f"unknown route {route}"}, status=404)

        async def health(_: web.Request) -> web.Response:
            return web.json_response(self.health())

        app = web.Application()
        app.router.add_get("/health", health)
        app.router.add_post("/{route}", handle)
        return app


def load_environment(entrypoint: str, params: dict[str, Any], actors: list[str] | None = None, name: str | None = None) -> Environment:
    """An instance set up as the runtime would (no actor handles: a served environment cannot
    generate from the run's actors). `actors`: the names it is set up with (resets name their own)."""
    module_name, _, class_name = entrypoint.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    env = cls()
    env.name, env.params, env.handles, env.rewards = name or class_name, params, {}, {}
    env.actors = list(actors or [])
    env.setup()
    return env


@dataclass
class Served:
    """The transports one `serve` started: their URLs (ports as bound) and how to stop them. Keep it:
    a grpc.aio server that is no longer referenced is collected, and stops serving."""

    urls: list[str]
    _runner: web.AppRunner | None = None
    _grpc: Any = None

    async def stop(self) -> None:
        if self._grpc is not None:
            await self._grpc.stop(grace=None)
        if self._runner is not None:
            await self._runner.cleanup()


async def serve(server: EnvServer, host: str, http_port: int | None, grpc_port: int | None) -> Served:
    """Start the transports asked for on the running loop (a port of 0 picks a free one)."""
    served = Served([])
    if http_port is not None:
        served._runner = web.AppRunner(server.app(), access_log=None)
        await served._runner.setup()
        await web.TCPSite(served._runner, host, http_port).start()
        served.urls.append(f"http://{host}:{served._runner.addresses[0][1]}")
    if grpc_port is not None:
        from .grpc_server import start_grpc  # grpcio is an extra (troupe[grpc]): imported only when asked

        served._grpc, bound = await start_grpc(server, host, grpc_port)
        served.urls.append(f"grpc://{host}:{bound}")
    return served


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m troupe.envserver", description="Serve a troupe.Environment over HTTP and/or gRPC (remote environments)."
    )
    parser.add_argument("entrypoint", nargs="?", help="module:Class of a troupe.Environment subclass (module importable here)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default 8100; without it, --grpc alone serves only gRPC)")
    parser.add_argument("--grpc", type=int, default=None, metavar="PORT", help='also (or only) serve gRPC on PORT (needs pip install "troupe[grpc]")')
    parser.add_argument("--params", default="{}", help="JSON object given to the environment as self.params")
    parser.add_argument("--session-ttl", type=float, default=600.0, help="seconds before an idle session is dropped")
    parser.add_argument("--actors", default="", help="comma-separated actor names to set the environment up with (some check them)")
    parser.add_argument("--name", default=None, help="the environment's name (self.name; default: the class name)")
    parser.add_argument("--print-proto", action="store_true", help="print the gRPC service definition (troupe_remote.proto) and exit")
    args = parser.parse_args(argv)
    if args.print_proto:
        sys.stdout.write((Path(__file__).parent / "troupe_remote.proto").read_text(encoding="utf-8"))
        return 0
    if not args.entrypoint:
        parser.error("the entrypoint (module:Class) is required")
    http_port = args.port if args.port is not None or args.grpc is not None else 8100
    if args.grpc is not None:
        try:
            import grpc  # noqa: F401
            import google.protobuf  # noqa: F401
        except ImportError:
            parser.error('--grpc needs grpcio and protobuf: pip install "troupe[grpc]"')
    sys.path.insert(0, ".")
    env = load_environment(args.entrypoint, json.loads(args.params), [a for a in args.actors.split(",") if a], args.name)
    server = EnvServer(env, args.session_ttl)

    async def run() -> None:
        served = await serve(server, args.host, http_port, args.grpc)
        print(f"serving {args.entrypoint} on {' and '.join(served.urls)}", flush=True)
        await asyncio.Event().wait()  # until the process is stopped

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0
