"""The gRPC transport's messages (troupe_remote.proto) and their mapping onto the protocol's JSON shape
(protocol.py), both ways, for the client (grpc_client.py) and the reference server (grpc_server.py).

Mapping to the same dicts is the point: one protocol, two transports. The server hands the dicts to the
same EnvServer methods that serve HTTP; the client validates replies with the same parsers, so a NaN
reward or a `next` naming a stranger is refused the same way over either. Presence is kept: an unset
`optional string` is JSON null, an unset `to` is null (every actor) and a set empty one [] (nobody).

The message classes are built from the compiled .proto (grpc_descriptor.py, see gen_proto.py for why)
in a private descriptor pool, so a user's own copy of troupe_remote.proto in the default pool cannot clash.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.message import Message

from .grpc_descriptor import SERIALIZED
from .protocol import ProtocolError

SERVICE = "troupe.remote.v1.Environment"
_pool = descriptor_pool.DescriptorPool()
_file = _pool.AddSerializedFile(SERIALIZED)


def _message(name: str) -> type[Message]:
    return message_factory.GetMessageClass(_file.message_types_by_name[name])


ResetRequest, ResetReply = _message("ResetRequest"), _message("ResetReply")
StepRequest, StepReply = _message("StepRequest"), _message("StepReply")
CloseRequest, CloseReply = _message("CloseRequest"), _message("CloseReply")
HealthRequest, HealthReply = _message("HealthRequest"), _message("HealthReply")
EnvMessage, Audience, Rewards = _message("EnvMessage"), _message("Audience"), _message("Rewards")

# The protocol's calls (the HTTP routes) -> (gRPC method, request class, reply class).
METHODS: dict[str, tuple[str, type[Message], type[Message]]] = {
    "reset": ("Reset", ResetRequest, ResetReply),
    "step": ("Step", StepRequest, StepReply),
    "close": ("Close", CloseRequest, CloseReply),
    "health": ("Health", HealthRequest, HealthReply),
}


def method_path(route: str) -> str:
    return f"/{SERVICE}/{METHODS[route][0]}"


def _opt(msg: Message, field: str) -> Any:
    return getattr(msg, field) if msg.HasField(field) else None


# -- requests: the client builds them from the protocol's bodies, the server reads them back
def request_message(route: str, body: dict[str, Any]) -> Message:
    if route == "reset":
        return ResetRequest(session=body["session"], row_json=json.dumps(body.get("row") or {}), actors=body.get("actors") or [], sample=int(body.get("sample", 0)))
    if route == "step":
        return StepRequest(session=body["session"], actor=body["actor"], text=body["text"])
    if route == "close":
        return CloseRequest(session=body["session"])
    return HealthRequest()


def request_body(route: str, msg: Any) -> dict[str, Any]:
    """A request as the HTTP body it stands for (an empty session reads as missing, as in JSON)."""
    if route == "reset":
        try:
            row = json.loads(msg.row_json) if msg.row_json else {}
        except ValueError as e:
            raise ProtocolError(f"reset.row_json: not JSON ({e})") from None
        return {"session": msg.session or None, "row": row, "actors": list(msg.actors), "sample": msg.sample}
    if route == "step":
        return {"session": msg.session or None, "actor": msg.actor or None, "text": msg.text}
    if route == "close":
        return {"session": msg.session}
    return {}


# -- replies: the server builds them from EnvServer's dicts, the client reads them back for protocol.py
def reply_message(route: str, data: dict[str, Any]) -> Message:
    if route == "reset":
        return ResetReply(message=data.get("message"), next=data.get("next"), done=bool(data.get("done")))
    if route == "step":
        reply = StepReply(next=data.get("next"), done=bool(data.get("done")))
        for m in data.get("messages") or []:
            out = reply.messages.add(text=m["text"])
            if m.get("to") is not None:
                out.to.actors.extend(m["to"])
                out.to.SetInParent()  # an empty list still says "nobody", not "everyone"
        for actor, components in (data.get("rewards") or {}).items():
            reply.rewards[actor].components.update(components)
        return reply
    if route == "close":
        return CloseReply(closed=bool(data.get("closed")))
    return HealthReply(ok=bool(data.get("ok")), environment=str(data.get("environment", "")), sessions=int(data.get("sessions", 0)))


def reply_data(route: str, msg: Any) -> dict[str, Any]:
    if route == "reset":
        return {"message": _opt(msg, "message"), "next": _opt(msg, "next"), "done": msg.done}
    if route == "step":
        messages = [{"text": m.text, "to": list(m.to.actors) if m.HasField("to") else None} for m in msg.messages]
        rewards = {actor: dict(r.components) for actor, r in msg.rewards.items()} or None
        return {"messages": messages, "next": _opt(msg, "next"), "done": msg.done, "rewards": rewards}
    if route == "close":
        return {"closed": msg.closed}
    return {"ok": msg.ok, "environment": msg.environment, "sessions": msg.sessions}
