"""Real servers on free local ports, in threads (aiohttp for HTTP, grpc.aio for gRPC): the reference
server or a faulty one; and small environments to serve."""

import asyncio
import os
import threading
from contextlib import contextmanager

from aiohttp import web

from troupe.envs.environment_api import Environment


@contextmanager
def serve(app: web.Application):
    """Yields the base URL; the server stops when the block ends."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    ready = threading.Event()
    box = {}

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        box["port"] = site._server.sockets[0].getsockname()[1]
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield f"http://127.0.0.1:{box['port']}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@contextmanager
def serve_grpc(handler):
    """A real grpc.aio server on a free local port, in a thread, with this generic handler (the reference
    server's, troupe.remote.grpc_server.generic_handler, or a faulty one). Yields the grpc:// URL."""
    import grpc

    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box = {}

    def run():
        asyncio.set_event_loop(loop)

        async def start():
            server = grpc.aio.server()
            server.add_generic_rpc_handlers((handler,))
            box["port"] = server.add_insecure_port("127.0.0.1:0")
            await server.start()
            box["server"] = server  # held here: an unreferenced grpc.aio server is collected and stops

        loop.run_until_complete(start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield f"grpc://127.0.0.1:{box['port']}"
    finally:
        asyncio.run_coroutine_threadsafe(box["server"].stop(grace=None), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


class Crasher(Environment):
    """Its process dies on the first step (os._exit): a server that crashes while a call waits on it.
    Served as a subprocess by tests/test_remote_grpc.py (`python -m troupe.envserver remote_helpers:Crasher`)."""

    def reset(self, episode):
        return "go"

    def step(self, episode, message):
        os._exit(3)


class Letters(Environment):
    """One turn: the reward is the share of the actor's characters that are among the row's `letters`
    (default "abcdefgh"). For tests/test_remote_run.py's gRPC learning check."""

    def step(self, episode, message):
        letters = str(episode.row.get("letters", "abcdefgh"))
        text = message.text
        episode.finish({message.actor: sum(ch in letters for ch in text) / max(len(text), 1)})
        return None
