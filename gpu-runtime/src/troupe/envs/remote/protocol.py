"""The remote-environment protocol, one session per episode. Two transports of the same calls: JSON over
HTTP (below; url "http://host:port" or "https://...") and gRPC (url "grpc://host:port": the service in
troupe_remote.proto, whose messages carry the same fields; grpc_wire.py maps them onto these dicts, so
every reply is validated here whichever way it came).

    POST /reset  {"session": str, "row": {...}, "actors": [str], "sample": int}
              -> {"message": str | null, "next": str | null, "done": bool}
    POST /step   {"session": str, "actor": str, "text": str}
              -> {"messages": [{"text": str, "to": [str] | null}], "next": str | null,
                  "done": bool, "rewards": {actor: number | {component: number}} | null}
    POST /close  {"session": str}  -> {"closed": bool}
    GET  /health -> {"ok": true, "environment": str, "sessions": int}

`message` of /reset is the opening (null: keep the spec's prompt); `messages` of /step are the
environment's replies after an actor spoke (they enter the conversation as environment messages,
never trained on); `next` names the actor to speak next (null: the runtime's default order);
`done` ends the episode, and `rewards` (read when done) are the environment's rewards per actor.
The server ends a session when it reports `done`. Errors: any non-2xx status, with
`{"error": str}` when the server can say why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping


HTTP_SCHEMES = ("http://", "https://")
GRPC_SCHEME = "grpc://"

# The refusal words of a remote environment's url (spec/game_remote_rules.py's, and environment.py's for its `python` form).
URL_HINT = 'a remote environment needs url: "http://host:port" or "grpc://host:port" of a server of the protocol'
GRPC_MISSING = (
    'a "grpc://" url needs grpcio and protobuf on this host (pip install "troupe[grpc]"); '
    "they are not installed here: install them, or serve the environment over http://"
)


@dataclass
class RemoteFailure(Exception):
    """One failed call: `kind` is timeout | connection | status | garbage; `route` the protocol's call
    (reset, step, ...), shown as the transport names it (POST step, gRPC Step)."""

    kind: str
    detail: str
    route: str
    transport: str = "http"

    def __str__(self) -> str:
        call = f"gRPC {self.route.capitalize()}" if self.transport == "grpc" else f"POST {self.route}"
        return f"{self.kind} on {call}: {self.detail}"


def grpc_available() -> bool:
    """grpcio and protobuf importable (looked up, not imported: the HTTP path never loads them)."""
    import importlib.util

    try:
        return importlib.util.find_spec("grpc") is not None and importlib.util.find_spec("google.protobuf") is not None
    except ImportError:  # no `google` package at all
        return False


def transport_of(url: str | None) -> str | None:
    """The transport a url names by its scheme: "http" (http://, https://), "grpc", or None."""
    text = str(url or "")
    if text.startswith(HTTP_SCHEMES):
        return "http"
    if re.fullmatch(r"grpc://[^\s/]+/?", text):  # host:port only, as the contracts' url rule says
        return "grpc"
    return None


class ProtocolError(ValueError):
    """A request or reply that does not follow the protocol (the message names the field)."""


def _obj(data: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ProtocolError(f"{what}: expected a JSON object, got {type(data).__name__}")
    return data


def _str(data: Mapping[str, Any], key: str, what: str, optional: bool = False) -> str | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"{what}.{key}: expected a string, got {type(value).__name__}")
    return value


def _bool(data: Mapping[str, Any], key: str, what: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ProtocolError(f"{what}.{key}: expected true or false, got {type(value).__name__}")
    return value


def _names(value: Any, where: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProtocolError(f"{where}: expected a list of actor names")
    return list(value)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
        raise ProtocolError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


@dataclass
class ResetRequest:
    session: str
    actors: list[str]
    row: dict[str, Any] = field(default_factory=dict)
    sample: int = 0

    @classmethod
    def parse(cls, data: Any) -> ResetRequest:
        d = _obj(data, "reset")
        session = _str(d, "session", "reset")
        assert session is not None
        actors = _names(d.get("actors"), "reset.actors") or []
        row = d.get("row") or {}
        sample = d.get("sample", 0)
        if not isinstance(row, Mapping) or not isinstance(sample, int):
            raise ProtocolError("reset.row must be an object and reset.sample an integer")
        return cls(session, actors, dict(row), sample)


@dataclass
class ResetReply:
    message: str | None = None
    next: str | None = None
    done: bool = False

    @classmethod
    def parse(cls, data: Any) -> ResetReply:
        d = _obj(data, "reset reply")
        return cls(_str(d, "message", "reset reply", True), _str(d, "next", "reset reply", True), _bool(d, "done", "reset reply"))


@dataclass
class StepRequest:
    session: str
    actor: str
    text: str

    @classmethod
    def parse(cls, data: Any) -> StepRequest:
        d = _obj(data, "step")
        return cls(*(_str(d, k, "step") or "" for k in ("session", "actor", "text")))


@dataclass
class EnvMessage:
    text: str
    to: list[str] | None = None


@dataclass
class StepReply:
    messages: list[EnvMessage] = field(default_factory=list)
    next: str | None = None
    done: bool = False
    rewards: dict[str, dict[str, float]] | None = None  # actor -> component -> value

    @classmethod
    def parse(cls, data: Any) -> StepReply:
        d = _obj(data, "step reply")
        raw = d.get("messages") or []
        if not isinstance(raw, list):
            raise ProtocolError("step reply.messages: expected a list")
        messages = []
        for k, m in enumerate(raw):
            m = _obj(m, f"step reply.messages.{k}")
            text = _str(m, "text", f"step reply.messages.{k}")
            assert text is not None
            messages.append(EnvMessage(text, _names(m.get("to"), f"step reply.messages.{k}.to")))
        rewards = None
        if d.get("rewards") is not None:
            given = _obj(d["rewards"], "step reply.rewards")
            rewards = {}
            for actor, value in given.items():
                where = f"step reply.rewards.{actor}"
                if isinstance(value, Mapping):
                    rewards[actor] = {k: _number(v, f"{where}.{k}") for k, v in value.items()}
                else:
                    rewards[actor] = {"environment": _number(value, where)}
        return cls(messages, _str(d, "next", "step reply", True), _bool(d, "done", "step reply"), rewards)
