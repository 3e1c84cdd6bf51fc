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
    sampling: dict[str, Any]
    requests: int = 0
    retries: int = 0

    def complete(self, messages: list[dict[str, str]]) -> str:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": float(self.sampling["temperature"]),
            "top_p": float(self.sampling["topP"]),
            "max_tokens": int(self.sampling["maxNewTokens"]),
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


def build_api_actor(actor_spec: dict[str, Any], index: int) -> ApiActor:
    api = actor_spec["api"]
    check_api_actor(api, index)  # the operator's key variables and hosts (host_policy.py)
    key = None
    if api.get("apiKeyEnv"):
        key = os.environ.get(api["apiKeyEnv"])
        if not key:
            raise SpecError.at(f"actors.{index}.api.apiKeyEnv", f'the environment variable {api["apiKeyEnv"]} is not set on this host')
    return ApiActor(actor_spec["name"], api["baseUrl"], api["model"], key, float(api["timeoutSeconds"]), int(api["maxRetries"]), actor_spec["sampling"])


def chat_view(actor: str, system: str | None, user: str, messages: list[Any]) -> list[dict[str, str]]:
    """The conversation as the API actor sees it: its own messages as `assistant`, others' as
    `user` turns prefixed with the speaker's name."""
    out = [{"role": "system", "content": system}] if system else []
    if user:
        out.append({"role": "user", "content": user})
    for m in messages:
        out.append({"role": "assistant", "content": m.text} if m.actor == actor else {"role": "user", "content": f"{m.actor}: {m.text}"})
    return out
