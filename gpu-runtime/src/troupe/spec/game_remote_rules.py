"""Cross-field rules of `game` and `remote` environments, mirrored from packages/contracts/src/runSpec.ts
(same paths, same words), plus what only the runtime can know (PettingZoo installed, the kinds wired in)."""

from __future__ import annotations

from typing import Any

from ..envs.acting import ACTING_KINDS
from ..envs.games.environment import game_issues
from ..envs.remote.protocol import GRPC_MISSING, URL_HINT, transport_of
from .issues import FieldIssue

# Until the acting dispatch builds these kinds, the same classes run as `python` environments.
ENTRYPOINTS = {"game": "troupe.games.environment:GameEnvironment", "remote": "troupe.remote.environment:RemoteEnvironment"}


def game_remote_issues(env: dict[str, Any], i: int, pettingzoo: bool = True, grpc: bool = True, chess: bool = True) -> list[FieldIssue]:
    """`pettingzoo`, `grpc`, `chess`: whether this host has them (support.py passes `pettingzoo_available()`,
    `grpc_available()`, `chess_available()`); contracts RUNNER_REQUIREMENTS "pettingzoo", "grpc" and "chess" are
    the same rules."""
    p = f"environments.{i}"
    kind = env.get("kind")
    issues = []
    for key, owner, words in (("game", "game", "game settings"), ("url", "remote", "a url"), ("remote", "remote", "remote settings")):
        if kind != owner and env.get(key) is not None:
            issues.append(FieldIssue(f"{p}.{key}", f"only {owner} environments take {words}"))
    if kind not in ENTRYPOINTS:
        return issues
    if kind not in ACTING_KINDS:
        settings = "the game settings" if kind == "game" else "url, timeoutSeconds, failureScore"
        issues.append(
            FieldIssue(f"{p}.kind", f'"{kind}" is not wired into this runtime yet: use kind "python", entrypoint "{ENTRYPOINTS[kind]}" and params ({settings})')
        )
    if kind == "remote" and not env.get("url"):
        issues.append(FieldIssue(f"{p}.url", URL_HINT))
    elif kind == "remote" and transport_of(env["url"]) == "grpc" and not grpc:
        issues.append(FieldIssue(f"{p}.url", GRPC_MISSING))
    if kind == "game":
        issues.extend(FieldIssue(path, message) for path, message in game_issues(env, i, pettingzoo, chess))
    return issues
