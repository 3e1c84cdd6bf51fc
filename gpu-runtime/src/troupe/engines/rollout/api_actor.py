"""Frozen actors behind an OpenAI-compatible chat API (`backend: "openai"`).

POST `<baseUrl>/chat/completions` with the actor's sampling settings (temperature, top_p,
max_tokens); the key, when `apiKeyEnv` names one, is read from that environment variable at
start-up and sent as `Authorization: Bearer`. Each request has `timeoutSeconds`; connection
errors, timeouts, HTTP 429 and 5xx are retried up to `maxRetries` times with exponential backoff
(BACKOFF_SECONDS x 2^attempt, capped at BACKOFF_CAP_SECONDS); other HTTP errors fail at once.
When the retries are spent the run fails (exit 1) with the URL and the last error. API actors
are never trained: no token ids or log-probs are kept, only text.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ...host.host_policy import check_api_actor
from ...spec import SpecError
from ...spec.runspec_types import Actor, ActorSampling, to_dict

BACKOFF_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0
MAX_PARALLEL_REQUESTS = 8


class ApiError(RuntimeError):
    pass


@dataclass
class ApiActor:
    name: str
    base_url: str
    model: str
    api_key: str | None
    timeout_seconds: float
    max_retries: int
    settings: ActorSampling  # the actor's typed `sampling` section (its JSON document is read into it)
    requests: int = 0
    retries: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.settings, ActorSampling):
            self.settings = ActorSampling.from_dict(self.settings)

    @property
    def sampling(self) -> dict[str, Any]:
        """The `sampling` section as its JSON document, for the parts that hand it on as a dict (envs/, evaluation)."""
        return to_dict(self.settings)  # type: ignore[no-any-return]

    def complete(self, messages: list[dict[str, str]]) -> str:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": float(self.settings.temperature),
            "top_p": float(self.settings.top_p),
            "max_tokens": int(self.settings.max_new_tokens),
        }
        url = self.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.retries += 1
                time.sleep(min(BACKOFF_SECONDS * 2 ** (attempt - 1), BACKOFF_CAP_SECONDS))
            self.requests += 1
            request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_seconds) as response:
                    data = json.loads(response.read().decode("utf-8"))
                return str(data["choices"][0]["message"]["content"] or "")
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}: {e.read()[:500].decode('utf-8', 'replace')}"
                if e.code != 429 and e.code < 500:
                    break
            except (urllib.error.URLError, TimeoutError, OSError) as e:
                last = f"{type(e).__name__}: {getattr(e, 'reason', e)}"
            except (ValueError, KeyError, IndexError, TypeError) as e:
                last = f"unreadable answer: {e!r}"
        raise ApiError(f'actor "{self.name}": {url} failed after {self.requests} request(s): {last}')

    def complete_many(self, conversations: list[list[dict[str, str]]]) -> list[str]:
        with ThreadPoolExecutor(max_workers=MAX_PARALLEL_REQUESTS) as pool:
            return list(pool.map(self.complete, conversations))


def build_api_actor(actor: Actor, index: int) -> ApiActor:
    """The client of a `backend: "openai"` actor from its typed section (`index`: its place in `actors`, for errors)."""
    api = actor.api
    assert api is not None  # the schema requires api for openai actors
    check_api_actor(to_dict(api), index)  # the operator's key variables and hosts (host_policy.py reads the document)
    key = None
    if api.api_key_env:
        key = os.environ.get(api.api_key_env)
        if not key:
            raise SpecError.at(f"actors.{index}.api.apiKeyEnv", f"the environment variable {api.api_key_env} is not set on this host")
    return ApiActor(actor.name, api.base_url, api.model, key, float(api.timeout_seconds), int(api.max_retries), actor.sampling)


def chat_view(actor: str, system: str | None, user: str, messages: list[Any]) -> list[dict[str, str]]:
    """The conversation as the API actor sees it: its own messages as `assistant`, others' as
    `user` turns prefixed with the speaker's name."""
    out = [{"role": "system", "content": system}] if system else []
    if user:
        out.append({"role": "user", "content": user})
    for m in messages:
        out.append({"role": "assistant", "content": m.text} if m.actor == actor else {"role": "user", "content": f"{m.actor}: {m.text}"})
    return out
