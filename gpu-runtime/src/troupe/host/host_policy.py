"""What an operator lets an API actor reach from this host (issue 30), mirrored from
packages/contracts/src/hostPolicy.ts: the environment variables an actor may name as its key
(TROUPE_ACTOR_KEY_ENVS; the runner passes exactly those to the runtime) and the hosts it may call
(TROUPE_API_HOSTS). The web refuses other values at launch; this is the check on the host, made before a
key is read or a request is sent, for runs queued while no runner had published its lists.

    check_api_actor(actor_spec["api"], index)      # raises SpecError at the field
    host_policy()                                  # what `troupe capabilities` publishes
"""

from __future__ import annotations

import os
import re
from typing import Any, Mapping
from urllib.parse import urlsplit

from .data_roots import configured_roots
from ..spec import SpecError

ACTOR_KEY_ENVS_VAR = "TROUPE_ACTOR_KEY_ENVS"
API_HOSTS_VAR = "TROUPE_API_HOSTS"
# Troupe's own secrets: never an actor's key, whatever is listed (contracts TROUPE_SECRETS).
TROUPE_SECRETS = ("DATABASE_URL", "REDIS_URL", "TROUPE_ADMIN_PASSWORD", "TROUPE_ADMIN_EMAIL", "TROUPE_TOKEN")


def env_list(name: str, environ: Mapping[str, str] = os.environ) -> list[str]:
    return [s for s in re.split(r"[,\s]+", environ.get(name, "")) if s]


def actor_key_envs(environ: Mapping[str, str] = os.environ) -> list[str]:
    return [n for n in env_list(ACTOR_KEY_ENVS_VAR, environ) if n not in TROUPE_SECRETS]


def host_allowed(url: str, allowed: list[str]) -> bool:
    """`host` (any port), `host:port` or `*.domain` entries, as hostAllowed in the contracts."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = str(parts.port) if parts.port else {"https": "443", "http": "80"}.get(parts.scheme, "")
    except ValueError:
        return False
    if not host:
        return False
    for entry in allowed:
        m = re.fullmatch(r"(\[[^\]]+\]|[^:]+)(?::(\d+))?", entry.lower())
        if not m:
            continue
        name, want_port = m.group(1).strip("[]"), m.group(2)
        if want_port is not None and want_port != port:
            continue
        if name.startswith("*.") and host.endswith(name[1:]) and len(host) > len(name) - 1:
            return True
        if name == host:
            return True
    return False


def check_api_actor(api: Mapping[str, Any], index: int, environ: Mapping[str, str] = os.environ) -> None:
    """Refuses an API actor whose key variable or host the operator did not list, naming the variable to set."""
    key_env = api.get("apiKeyEnv")
    if key_env and key_env not in actor_key_envs(environ):
        why = "is one of Troupe's own secrets and never reaches a run" if key_env in TROUPE_SECRETS else "is not a key variable this runner passes to runs"
        raise SpecError.at(f"actors.{index}.api.apiKeyEnv", f"{key_env} {why}: the operator lists actor key variables in {ACTOR_KEY_ENVS_VAR} on the runner host")
    if not host_allowed(str(api["baseUrl"]), env_list(API_HOSTS_VAR, environ)):
        host = urlsplit(str(api["baseUrl"])).hostname or api["baseUrl"]
        raise SpecError.at(f"actors.{index}.api.baseUrl", f"host {host} is not one an API actor may call from this runner: the operator lists hosts in {API_HOSTS_VAR} on the runner host")


def host_policy() -> dict[str, list[str]]:
    """The lists as `troupe capabilities` publishes them (contracts HostPolicy)."""
    return {"actorKeyEnvs": actor_key_envs(), "apiHosts": env_list(API_HOSTS_VAR), "dataRoots": [str(p) for p in configured_roots()]}
