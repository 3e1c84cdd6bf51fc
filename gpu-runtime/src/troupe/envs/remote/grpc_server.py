"""The reference server over gRPC: the service of troupe_remote.proto on grpc.aio, served by the same
EnvServer (server.py) as HTTP, so one environment class serves both transports (and when both run in one
process, one table of sessions).

Statuses, as the HTTP server's codes: a request that breaks the protocol -> INVALID_ARGUMENT (400), an
unknown session -> NOT_FOUND (404), the environment's own code raised -> INTERNAL "ErrorType: message"
(500). The handlers run on the server's event loop, one at a time, as the HTTP ones do.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import grpc

from .grpc_wire import METHODS, SERVICE, reply_message, request_body
from .protocol import ProtocolError
from .server import EnvServer


def _answer(server: EnvServer, route: str, body: dict[str, Any]) -> dict[str, Any]:
    if route == "reset":
        return server.reset(body)
    if route == "step":
        return server.step(body)
    if route == "close":
        return server.close(body)
    return server.health()


def _handler(server: EnvServer, route: str) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]:
    async def handle(request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return reply_message(route, _answer(server, route, request_body(route, request)))
        except ProtocolError as e:
            code, details = grpc.StatusCode.INVALID_ARGUMENT, str(e)
        except KeyError as e:
            code, details = grpc.StatusCode.NOT_FOUND, str(e.args[0])
        except Exception as e:  # the environment's own code failed: say so, keep serving
            code, details = grpc.StatusCode.INTERNAL, f"{type(e).__name__}: {e}"
        await context.abort(code, details[:2000])  # raises: ends the call with that status

    return handle


def generic_handler(server: EnvServer) -> grpc.GenericRpcHandler:
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            _handler(server, route), request_deserializer=request_type.FromString, response_serializer=lambda m: m.SerializeToString()
        )
        for route, (name, request_type, _) in METHODS.items()
    }
    return grpc.method_handlers_generic_handler(SERVICE, handlers)


async def start_grpc(server: EnvServer, host: str, port: int) -> tuple[grpc.aio.Server, int]:
    """Serve on host:port (0: a free port) on the running loop; (the server, the port it bound)."""
    grpc_server = grpc.aio.server()
    grpc_server.add_generic_rpc_handlers((generic_handler(server),))
    bound = grpc_server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"could not bind gRPC to {host}:{port}")
    await grpc_server.start()
    return grpc_server, bound
