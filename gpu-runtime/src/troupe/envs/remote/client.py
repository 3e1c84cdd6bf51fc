"""The runtime's side of the remote protocol: many sessions at once, each call with a timeout, each
reply validated. A call that times out, cannot connect, gets an error status or a reply that breaks
the protocol raises `RemoteFailure` naming what went wrong; nothing here retries (a failed episode is
the environment's policy, see environment.py).

`LoopClient` runs its transport on a private event loop in a daemon thread, so the synchronous runtime
can fire a whole turn's calls together (`call_many`) and wait for them all. Two transports of the same
calls: `RemoteClient` (JSON over HTTP, aiohttp, one connection pool) here, and `GrpcClient`
(grpc_client.py, one grpc.aio channel), which `connect` imports only for a grpc:// url. Every call goes
through the client's `SessionGate` (gate.py): at most `maxConcurrentSessions` in flight, each session
within its `sessionTimeoutSeconds`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Callable, Sequence, TypeVar

import aiohttp

from .gate import SessionGate, SessionLimits
from .protocol import ProtocolError, RemoteFailure, transport_of

T = TypeVar("T")


class LoopClient:
    """A transport's calls on a private event loop; subclasses give `_post` (one call) and `_shutdown`."""

    transport = "http"

    def __init__(self, url: str, timeout_s: float, limits: SessionLimits | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.gate = SessionGate(limits or SessionLimits())
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="troupe-remote-env", daemon=True)
        self._thread.start()

    async def _post(self, route: str, body: dict[str, Any], parse: Callable[[Any], T]) -> T:
        """One call: `body` in the protocol's JSON shape, `parse` validates the reply's (protocol.py)."""
        raise NotImplementedError

    async def _shutdown(self) -> None:
        raise NotImplementedError

    def call_many(self, route: str, bodies: Sequence[dict[str, Any]], parse: Callable[[Any], T]) -> list[T | RemoteFailure]:
        """Send every body to `route` at once; each result is the parsed reply or its failure."""

        async def gather() -> list[T | RemoteFailure]:
            results = await asyncio.gather(
                *(self.gate.call(b.get("session"), lambda b=b: self._post(route, b, parse), route, self.transport) for b in bodies),
                return_exceptions=True,
            )
            out: list[T | RemoteFailure] = []
            for r in results:
                if isinstance(r, BaseException) and not isinstance(r, RemoteFailure):
                    r = RemoteFailure("connection", f"{type(r).__name__}: {r}"[:300], route, self.transport)
                out.append(r)  # type: ignore[arg-type]
            return out

        return asyncio.run_coroutine_threadsafe(gather(), self._loop).result()

    def call(self, route: str, body: dict[str, Any], parse: Callable[[Any], T]) -> T:
        result = self.call_many(route, [body], parse)[0]
        if isinstance(result, RemoteFailure):
            raise result
        return result

    def close(self) -> None:
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)


class RemoteClient(LoopClient):
    """JSON over HTTP (aiohttp): one pool of `max_connections` connections for every session (absent: one
    per call the gate lets through, `maxConcurrentSessions`)."""

    def __init__(self, url: str, timeout_s: float, max_connections: int | None = None, limits: SessionLimits | None = None) -> None:
        super().__init__(url, timeout_s, limits)
        self.max_connections = max_connections or self.gate.limits.max_concurrent
        self._session: aiohttp.ClientSession | None = None

    async def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.max_connections), timeout=aiohttp.ClientTimeout(total=self.timeout_s)
            )
        return self._session

    async def _post(self, route: str, body: dict[str, Any], parse: Callable[[Any], T]) -> T:
        http = await self._http()
        try:
            async with http.post(f"{self.url}/{route}", json=body) as response:
                text = await response.text()
                if response.status // 100 != 2:
                    try:
                        why = json.loads(text).get("error") or text
                    except (ValueError, AttributeError):
                        why = text
                    raise RemoteFailure("status", f"HTTP {response.status}: {str(why)[:300]}", route)
        except asyncio.TimeoutError:
            raise RemoteFailure("timeout", f"no reply within {self.timeout_s:g} s", route) from None
        except aiohttp.ClientError as e:
            raise RemoteFailure("connection", f"{type(e).__name__}: {e}"[:300], route) from None
        try:
            return parse(json.loads(text))
        except (ValueError, ProtocolError) as e:
            raise RemoteFailure("garbage", f"{e}"[:300] if isinstance(e, ProtocolError) else f"not JSON: {text[:120]!r}", route) from None

    async def _shutdown(self) -> None:
        if self._session is not None:
            await self._session.close()


def connect(url: str, timeout_s: float, limits: SessionLimits | None = None) -> LoopClient:
    """The client of `url`'s transport. gRPC is imported here only: grpcio is an extra (troupe[grpc])."""
    if transport_of(url) == "grpc":
        from .grpc_client import GrpcClient  # optional engine: grpcio is an extra (troupe[grpc])

        return GrpcClient(url, timeout_s, limits)
    return RemoteClient(url, timeout_s, limits=limits)
