"""The runtime's gRPC client of the remote protocol (url "grpc://host:port"): every session's calls go
through one grpc.aio channel (HTTP/2 streams on one connection), each with the spec's timeout as its
deadline. Failures map onto the HTTP client's kinds, so environment.py's policy is the same:

- DEADLINE_EXCEEDED -> timeout; UNAVAILABLE (nothing listening, the server died, the connection
  dropped) -> connection; any other status -> status, with its code and details (the reference server
  sends INTERNAL "ErrorType: message" when the environment raised);
- a reply that is not a message of the method's reply type, or that breaks the protocol once read
  (protocol.py: a NaN reward, ...) -> garbage.

Replies are read as raw bytes and parsed here (not by grpcio's deserializer), so a garbage reply is told
apart from a transport failure and its parse error is quoted. Imported only for a grpc:// url: grpcio and
protobuf come with `pip install "troupe[grpc]"`.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import grpc
from google.protobuf.message import DecodeError

from .client import LoopClient, RemoteFailure
from .gate import SessionLimits
from .grpc_wire import METHODS, method_path, reply_data, request_message
from .protocol import GRPC_SCHEME, ProtocolError

T = TypeVar("T")

# No keepalive pings: a gRPC server with default settings answers a client that pings more often than
# every 5 minutes during a quiet call with GOAWAY "too_many_pings", which would fail slow but healthy
# episodes. A server that vanishes without closing its connection is caught by each call's deadline.
CHANNEL_OPTIONS: list[tuple[str, int]] = []


def _serialize(message: Any) -> bytes:
    return message.SerializeToString()


class GrpcClient(LoopClient):
    transport = "grpc"

    def __init__(self, url: str, timeout_s: float, limits: SessionLimits | None = None) -> None:
        super().__init__(url, timeout_s, limits)
        self.target = self.url[len(GRPC_SCHEME) :]
        self._channel: grpc.aio.Channel | None = None
        self._calls: dict[str, Any] = {}

    def _call(self, route: str) -> Any:
        # The channel belongs to the loop it was made on: made here, on the client's own loop, at first use.
        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(self.target, options=CHANNEL_OPTIONS)
        if route not in self._calls:
            self._calls[route] = self._channel.unary_unary(method_path(route), request_serializer=_serialize, response_deserializer=None)
        return self._calls[route]

    async def _post(self, route: str, body: dict[str, Any], parse: Callable[[Any], T]) -> T:
        name, _, reply_type = METHODS[route]
        try:
            raw = await self._call(route)(request_message(route, body), timeout=self.timeout_s)
        except grpc.aio.AioRpcError as e:
            code, details = e.code(), (e.details() or "")[:300]
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise RemoteFailure("timeout", f"no reply within {self.timeout_s:g} s (DEADLINE_EXCEEDED)", route, "grpc") from None
            if code == grpc.StatusCode.UNAVAILABLE:
                raise RemoteFailure("connection", f"UNAVAILABLE: {details}", route, "grpc") from None
            raise RemoteFailure("status", f"{code.name}: {details}", route, "grpc") from None
        try:
            reply = reply_type.FromString(raw)
        except DecodeError as e:
            raise RemoteFailure("garbage", f"not a {name} reply ({reply_type.DESCRIPTOR.name}): {e}"[:300], route, "grpc") from None
        try:
            return parse(reply_data(route, reply))
        except ProtocolError as e:
            raise RemoteFailure("garbage", str(e)[:300], route, "grpc") from None

    async def _shutdown(self) -> None:
        if self._channel is not None:
            await self._channel.close()
