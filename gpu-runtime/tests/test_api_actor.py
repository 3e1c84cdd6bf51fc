"""OpenAI-compatible API actors against a tiny local HTTP server started here (the edge, not our service)."""

import time

import pytest
from chat_server_helpers import ChatServer, Request, last_message
from collab_helpers import secret_digit_spec
from runtime_helpers import check_protocol

from troupe import EventWriter, run_spec
from troupe.engines.rollout.api_actor import ApiActor, ApiError


def fake_api(fail_first=0, slow=0.0, status=None) -> ChatServer:
    """Answers /chat/completions with `echo <last 3 chars>`; `fail_first` requests get 503, `slow` seconds of
    delay each, `status` for every request when set."""

    def reply(request: Request, index: int) -> tuple[int, str]:
        if slow:
            time.sleep(slow)
        if status or index <= fail_first:
            return status or 503, "busy"
        return 200, f"echo {last_message(request)[-3:]}"

    return ChatServer(reply)


SAMPLING = {"temperature": 0.7, "topP": 0.9, "topK": 0, "maxNewTokens": 5}


def test_request_shape_key_and_retries_with_backoff():
    with fake_api(fail_first=2) as api:
        actor = ApiActor("judge", api.url, "gpt-test", "sk-local", 5.0, 3, SAMPLING)
        started = time.monotonic()
        assert actor.complete([{"role": "user", "content": "hello"}]) == "echo llo"
        waited = time.monotonic() - started
    assert len(api.requests) == 3 and actor.retries == 2
    assert waited >= 0.5 + 1.0  # backoff 0.5 s then 1 s
    first = api.requests[0]
    assert first.path == "/v1/chat/completions" and first.auth == "Bearer sk-local"
    assert first.body == {"model": "gpt-test", "messages": [{"role": "user", "content": "hello"}], "temperature": 0.7, "top_p": 0.9, "max_tokens": 5}


def test_timeouts_are_retried_then_fail_with_the_url():
    with fake_api(slow=1.0) as api:
        actor = ApiActor("judge", api.url, "m", None, 0.2, 1, SAMPLING)
        with pytest.raises(ApiError, match=r"chat/completions failed after 2 request\(s\)"):
            actor.complete([{"role": "user", "content": "x"}])
    assert api.requests[0].auth is None


def test_client_errors_are_not_retried():
    with fake_api(status=401) as api:
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
    with fake_api() as api:
        result = run_spec(_api_spec(tmp_path, api.url), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    assert len(api.requests) == 2 * 8 * 8  # steps x prompts x samples, one Bob turn each
    messages = api.requests[0].body["messages"]
    assert messages[0] == {"role": "system", "content": "You are Bob."}
    assert messages[1] == {"role": "user", "content": "?"} and messages[2]["content"].startswith("Alice: ")
    assert {r.auth for r in api.requests} == {"Bearer sk-bob"}
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
