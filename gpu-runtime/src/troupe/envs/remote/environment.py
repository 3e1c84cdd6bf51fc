"""`environments[].kind: "remote"`: the episodes are played against an environment served over
HTTP or gRPC (protocol.py; the url's scheme picks the transport), one session per episode; a turn's
calls go out together.

    url: "http://host:8100" | "grpc://host:8101", remote: {timeoutSeconds: 30, failureScore: 0,
        maxConcurrentSessions: 256, sessionTimeoutSeconds: 300}

At most `maxConcurrentSessions` sessions have a call in flight; the rest queue (gate.py). A session
whose calls take more than `sessionTimeoutSeconds` in all fails as a timeout. Each step reports
`remote/failed_sessions` and `remote/timeouts` (metrics.py).

Failed episodes. A call that times out, cannot connect, gets an error status or a reply that
breaks the protocol (or names an actor that is not in the environment) fails that episode only:
- one log line (level "error") names the environment, the episode (group, sample), the call and
  the cause;
- the episode ends there; its tokens train nothing (every actor's loss mask on it is zeroed);
- every actor of it scores `failureScore` (component "environment"), so the failure shows in the
  reward metrics and transcripts;
- the run goes on: the other episodes of the step train as usual.
"""

from __future__ import annotations

import logging
import uuid
from urllib.parse import urlsplit
from typing import Any, Sequence

from ..environment_api import Environment, Reply
from ...host.host_policy import API_HOSTS_VAR, env_list, host_allowed
from ...spec import SpecError
from ...spec.runspec_types import EnvironmentRemote, to_dict
from .client import LoopClient, RemoteFailure, connect
from .gate import DEFAULT_MAX_CONCURRENT, SessionLimits
from .metrics import session_metrics
from .protocol import GRPC_MISSING, URL_HINT, ResetReply, StepReply, grpc_available, transport_of

def check_environment_url(url: str, field: str) -> None:
    """The trainer calls a remote environment itself, so its host must be one the operator lists, as for API
    actors (host_policy.py, TROUPE_API_HOSTS); the launch refuses the same (contracts hostPolicy.ts)."""
    if not host_allowed(url, env_list(API_HOSTS_VAR)):
        host = urlsplit(url).hostname or url
        raise SpecError.at(field, f"host {host} is not one a run may call from this runner: the operator lists hosts in {API_HOSTS_VAR} on the runner host")


DEFAULTS = {"timeoutSeconds": 30.0, "failureScore": 0.0, "maxConcurrentSessions": DEFAULT_MAX_CONCURRENT, "sessionTimeoutSeconds": None}


def limits_of(settings: dict[str, Any]) -> SessionLimits:
    budget = settings.get("sessionTimeoutSeconds")
    return SessionLimits(int(settings["maxConcurrentSessions"]), None if budget is None else float(budget))
_log = logging.getLogger("troupe.remote")


class RemoteEnvironment(Environment):
    speaker = "environment"

    def __init__(
        self, url: str | None = None, timeout_s: float = DEFAULTS["timeoutSeconds"], failure_score: float = DEFAULTS["failureScore"],
        limits: SessionLimits | None = None,
    ) -> None:
        """From the spec (`from_spec`), or with no arguments as a `python` environment class whose
        `params` are {url, timeoutSeconds, failureScore, maxConcurrentSessions, sessionTimeoutSeconds}."""
        self.url = url or ""
        self.timeout_s = timeout_s
        self.failure_score = failure_score
        self.client: LoopClient | None = connect(url, timeout_s, limits) if url else None
        self.failed = 0  # episodes failed so far in this run

    def setup(self) -> None:
        if self.client is None:
            settings = {**DEFAULTS, **(self.params or {})}
            if transport_of(settings.get("url")) is None:
                raise ValueError(f"params.url: {URL_HINT}")
            if transport_of(settings.get("url")) == "grpc" and not grpc_available():
                raise ValueError(f"params.url: {GRPC_MISSING}")
            check_environment_url(str(settings["url"]), "params.url")
            self.url, self.failure_score = str(settings["url"]), float(settings["failureScore"])
            self.client = connect(self.url, float(settings["timeoutSeconds"]), limits_of(settings))

    @classmethod
    def from_section(cls, url: str | None, remote: EnvironmentRemote | None, index: int) -> RemoteEnvironment:
        """From a `kind: "remote"` environment's typed `url` and `remote` settings."""
        return cls._checked(url, {**DEFAULTS, **(to_dict(remote) if remote is not None else {})}, index)

    @classmethod
    def from_spec(cls, env_spec: dict[str, Any], index: int) -> RemoteEnvironment:
        """The same from an environment's JSON document."""
        return cls._checked(env_spec.get("url"), {**DEFAULTS, **(env_spec.get("remote") or {})}, index)

    @classmethod
    def _checked(cls, url: str | None, settings: dict[str, Any], index: int) -> RemoteEnvironment:
        if transport_of(url) is None:
            raise SpecError.at(f"environments.{index}.url", URL_HINT)
        if transport_of(url) == "grpc" and not grpc_available():
            raise SpecError.at(f"environments.{index}.url", GRPC_MISSING)
        check_environment_url(str(url), f"environments.{index}.url")
        return cls(str(url), float(settings["timeoutSeconds"]), float(settings["failureScore"]), limits_of(settings))

    # -- failure policy
    def fail(self, episode: Any, where: str, failure: RemoteFailure | str) -> None:
        self.failed += 1
        episode.state["failed"] = f"{where}: {failure}"
        episode.state["failure_kind"] = failure.kind if isinstance(failure, RemoteFailure) else "garbage"
        self._forget(episode)
        episode.done = True
        for view in episode.views.values():
            view.own = [0] * len(view.own)
        line = (
            f'remote environment "{self.name}" ({self.url}): episode group {episode.group} sample {episode.sample} failed at {where}: '
            f"{failure}; it trains nothing and scores failureScore {self.failure_score:g}"
        )
        if self.log_sink is not None:  # the run's log (set by the runtime)
            self.log("error", line)
        else:
            _log.error(line)

    def _check_next(self, episode: Any, name: str | None, where: str) -> bool:
        if name is not None and name not in self.actors:
            self.fail(episode, where, f'garbage: next names "{name}", who is not one of the actors ({", ".join(self.actors)})')
            return False
        episode.state["next"] = name
        return True

    # -- the protocol
    def reset(self, episode: Any) -> str | None:
        return self.reset_many([episode])[0]

    def reset_many(self, episodes: Sequence[Any]) -> list[str | None]:
        bodies = []
        for e in episodes:
            e.state["session"] = uuid.uuid4().hex
            e.state["turn"] = 0
            bodies.append({"session": e.state["session"], "row": e.row, "actors": self.actors, "sample": e.sample})
        out: list[str | None] = []
        assert self.client is not None, "setup() first"
        for e, reply in zip(episodes, self.client.call_many("reset", bodies, ResetReply.parse)):
            if isinstance(reply, RemoteFailure):
                self.fail(e, "reset", reply)
                out.append(None)
                continue
            if self._check_next(e, reply.next, "reset") and reply.done:
                e.done = True
                self._forget(e)
            out.append(reply.message)
        return out

    def next_speaker(self, episode: Any, turn: int) -> str | None:
        if episode.done:
            return None
        return episode.state.get("next") or super().next_speaker(episode, turn)

    def step_many(self, pairs: Sequence[tuple[Any, Any]]) -> list[list[Reply] | None]:
        live = [(e, m) for e, m in pairs if not e.done]
        bodies = [{"session": e.state["session"], "actor": m.actor, "text": m.text} for e, m in live]
        assert self.client is not None, "setup() first"
        replies = dict(zip((id(e) for e, _ in live), self.client.call_many("step", bodies, StepReply.parse))) if live else {}
        out: list[list[Reply] | None] = []
        for e, _ in pairs:
            reply = replies.get(id(e))
            e.state["turn"] = e.state.get("turn", 0) + 1
            if reply is None:
                out.append(None)
            elif isinstance(reply, RemoteFailure):
                self.fail(e, f"step {e.state['turn']}", reply)
                out.append(None)
            else:
                bad = [a for a in (reply.rewards or {}) if a not in self.actors]
                if bad:
                    self.fail(e, f"step {e.state['turn']}", f'garbage: rewards name "{bad[0]}", who is not one of the actors')
                    out.append(None)
                    continue
                if not self._check_next(e, reply.next, f"step {e.state['turn']}"):
                    out.append(None)
                    continue
                if reply.done:
                    e.done = True
                    e.state["rewards"] = reply.rewards or {}
                    self._forget(e)
                out.append([Reply(m.text, m.to) for m in reply.messages])
        return out

    def step(self, episode: Any, message: Any) -> list[Reply] | None:
        return self.step_many([(episode, message)])[0]

    def score(self, episode: Any) -> dict[str, float | dict[str, float]]:
        if "failed" in episode.state:
            return {a: {"environment": self.failure_score} for a in self.actors}
        return dict(episode.state.get("rewards") or {})

    def _forget(self, episode: Any) -> None:
        if self.client is not None and "session" in episode.state:
            self.client.gate.forget(episode.state["session"])

    def metrics(self, episodes: Sequence[Any]) -> dict[str, float]:
        return session_metrics(episodes)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
