"""OpenAI-compatible API actors against a tiny local HTTP server started here (the edge, not our service)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from collab_helpers import secret_digit_spec
from runtime_helpers import check_protocol

from troupe import EventWriter, run_spec
from troupe.engines.rollout.api_actor import ApiActor, ApiError


class FakeApi:
    """Answers /chat/completions; `fail_first` requests get 503, `slow` seconds of delay each."""

    def __init__(self, fail_first=0, slow=0.0, status=None):
        self.requests, self.fail_first, self.slow, self.status = [], fail_first, slow, status
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                if api.slow:
                    time.sleep(api.slow)
                if api.status or len(api.requests) <= api.fail_first:
                    self.send_response(api.status or 503)
                    self.end_headers()
                    self.wfile.write(b"busy")
                    return
                last = body["messages"][-1]["content"]
                answer = {"choices": [{"message": {"role": "assistant", "content": f"echo {last[-3:]}"}}]}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


SAMPLING = {"temperature": 0.7, "topP": 0.9, "topK": 0, "maxNewTokens": 5}


def test_request_shape_key_and_retries_with_backoff():
    with FakeApi(fail_first=2) as api:
        actor = ApiActor("judge", api.url, "gpt-test", "sk-local", 5.0, 3, SAMPLING)
        started = time.monotonic()
        assert actor.complete([{"role": "user", "content": "hello"}]) == "echo llo"
        waited = time.monotonic() - started
    assert len(api.requests) == 3 and actor.retries == 2
    assert waited >= 0.5 + 1.0  # backoff 0.5 s then 1 s
    first = api.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer sk-local"
    assert first["body"] == {"model": "gpt-test", "messages": [{"role": "user", "content": "hello"}], "temperature": 0.7, "top_p": 0.9, "max_tokens": 5}


def test_timeouts_are_retried_then_fail_with_the_url():
    with FakeApi(slow=1.0) as api:
        actor = ApiActor("judge", api.url, "m", None, 0.2, 1, SAMPLING)
        with pytest.raises(ApiError, match=r"chat/completions failed after 2 request\(s\)"):
            actor.complete([{"role": "user", "content": "x"}])
    assert api.requests[0]["auth"] is None


def test_client_errors_are_not_retried():
    with FakeApi(status=401) as api:
        actor = ApiActor("judge", api.url, "m", None, 2.0, 3, SAMPLING)
        with pytest.raises(ApiError, match="HTTP 401"):
            actor.complete([{"role": "user", "content": "x"}])
    assert len(api.requests) == 1


def _api_spec(tmp_path, url):
    spec = secret_digit_spec(tmp_path, steps=2, bob_trainable=False)
    spec["actors"][1] = {
        "name": "Bob",
        "model": {"source": "tiny"},
        "backend": "openai",
        "trainable": False,
        "api": {"baseUrl": url, "model": "bob-model", "apiKeyEnv": "TROUPE_TEST_BOB_KEY", "timeoutSeconds": 5, "maxRetries": 2},
        "sampling": {"maxNewTokens": 3},
    }
    spec["environments"][0]["systemPrompts"]["Bob"] = "You are Bob."
    return spec


def test_a_collaborative_run_with_an_api_actor(tmp_path, events_validator, monkeypatch):
    monkeypatch.setenv("TROUPE_TEST_BOB_KEY", "sk-bob")
    with FakeApi() as api:
        result = run_spec(_api_spec(tmp_path, api.url), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    assert len(api.requests) == 2 * 8 * 8  # steps x prompts x samples, one Bob turn each
    messages = api.requests[0]["body"]["messages"]
    assert messages[0] == {"role": "system", "content": "You are Bob."}
    assert messages[1] == {"role": "user", "content": "?"} and messages[2]["content"].startswith("Alice: ")
    assert {r["auth"] for r in api.requests} == {"Bearer sk-bob"}
    episode = next(e for e in result.events if e["type"] == "episode")
    bob = [m for m in episode["messages"] if m["actor"] == "Bob" and m["role"] == "assistant"]
    assert bob[0]["content"].startswith("echo ") and bob[0]["trained"] is False
    assert {e.get("actor") for e in result.events if e["type"] == "metric"} == {"Alice"}


def test_a_missing_key_variable_is_a_spec_error(tmp_path, monkeypatch):
    monkeypatch.delenv("TROUPE_TEST_BOB_KEY", raising=False)
    result = run_spec(_api_spec(tmp_path, "http://127.0.0.1:9/v1"), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "actors.1.api.apiKeyEnv" and "TROUPE_TEST_BOB_KEY" in error["message"]


def test_an_unreachable_api_fails_the_run_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("TROUPE_TEST_BOB_KEY", "k")
    spec = _api_spec(tmp_path, "http://127.0.0.1:9/v1")
    spec["actors"][1]["api"]["maxRetries"] = 0
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 1
    error = next(e for e in result.events if e["type"] == "error")
    assert "127.0.0.1:9/v1/chat/completions failed" in error["message"]
