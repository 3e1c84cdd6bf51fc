"""Issue 30 on the runner host: an editor's spec reaches no file, key or host the operator did not list.

The web refuses these at launch (packages/contracts hostPolicy.ts); these are the runtime's own checks, for
runs that slip past it (queued while no runner had published its lists, or a symlink planted under a root)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from collab_helpers import secret_digit_spec

from troupe import EventWriter, run_spec
from troupe.envs.data import load_dataset
from troupe.host.host_policy import check_api_actor, host_allowed
from troupe.spec import SpecError

SECRET_LINE = "root:$y$j9T$not-a-real-hash:20000:0:99999:7:::"


@pytest.fixture
def root_only_file(tmp_path: Path) -> Path:
    """A file only root may read, outside every data root (the tests narrow TROUPE_DATA_ROOTS)."""
    folder = tmp_path / "secrets"
    folder.mkdir(mode=0o700)
    path = folder / "shadow.jsonl"
    path.write_text(json.dumps({"prompt": SECRET_LINE}) + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def narrow_roots(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "data-root"
    root.mkdir()
    monkeypatch.setenv("TROUPE_DATA_ROOTS", str(root))
    return root


def _file_dataset(path: str) -> dict:
    return {"name": "d", "source": {"kind": "file", "path": path, "format": "jsonl"}, "evalFraction": 0.0}


def test_a_file_outside_the_roots_is_refused_by_field_without_reading_it(tmp_path, root_only_file, narrow_roots):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with pytest.raises(SpecError) as refused:
        load_dataset(_file_dataset(str(root_only_file)), 0, 1, run_dir)
    assert refused.value.field == "datasets.0.source.path"
    assert "TROUPE_DATA_ROOTS" in str(refused.value) and "not-a-real-hash" not in str(refused.value)


@pytest.mark.parametrize("where", ["run folder", "data root"])
def test_a_symlink_into_a_root_only_file_is_refused_after_resolving_it(tmp_path, root_only_file, narrow_roots, where):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    folder = run_dir if where == "run folder" else narrow_roots
    link = folder / "innocent.jsonl"
    link.symlink_to(root_only_file)
    with pytest.raises(SpecError) as refused:
        load_dataset(_file_dataset("innocent.jsonl" if where == "run folder" else str(link)), 0, 1, run_dir)
    assert refused.value.field == "datasets.0.source.path"
    assert f"resolves to {root_only_file}" in str(refused.value) and "not-a-real-hash" not in str(refused.value)


def test_a_relative_path_climbing_out_of_the_run_folder_is_refused(tmp_path, root_only_file, narrow_roots):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with pytest.raises(SpecError, match="outside the run folder"):
        load_dataset(_file_dataset("../secrets/shadow.jsonl"), 0, 1, run_dir)


def test_files_in_the_run_folder_and_under_a_root_are_read(tmp_path, narrow_roots):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "a.jsonl").write_text('{"prompt": "in the run folder"}\n')
    (narrow_roots / "b.jsonl").write_text('{"prompt": "under a root"}\n')
    (narrow_roots / "link.jsonl").symlink_to(narrow_roots / "b.jsonl")  # a link that stays inside is fine
    assert load_dataset(_file_dataset("a.jsonl"), 0, 1, run_dir).rows == [{"prompt": "in the run folder"}]
    assert load_dataset(_file_dataset(str(narrow_roots / "b.jsonl")), 0, 1, run_dir).rows == [{"prompt": "under a root"}]
    assert load_dataset(_file_dataset(str(narrow_roots / "link.jsonl")), 0, 1, run_dir).rows == [{"prompt": "under a root"}]


def test_a_run_naming_a_root_only_file_fails_at_the_field_and_shows_none_of_it(tmp_path, root_only_file, narrow_roots):
    spec = secret_digit_spec(tmp_path, steps=1, bob_trainable=False)
    spec["datasets"][0] = {**spec["datasets"][0], "source": {"kind": "file", "path": str(root_only_file), "format": "jsonl"}}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "run")
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "datasets.0.source.path"
    assert "not-a-real-hash" not in json.dumps(result.events)


def test_a_local_model_outside_the_roots_is_refused(tmp_path, narrow_roots):
    spec = secret_digit_spec(tmp_path, steps=1, bob_trainable=False)
    spec["actors"][0]["model"] = {"source": "local", "path": "/etc"}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)  # its dataset file is in the run folder
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "actors.0.model.path" and "TROUPE_DATA_ROOTS" in error["message"]


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_POST(self):  # noqa: N802
        _Recorder.seen.append(self.headers.get("Authorization", ""))
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def loopback():
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def _api_actor_spec(tmp_path, url: str, key_env: str) -> dict:
    spec = secret_digit_spec(tmp_path, steps=1, bob_trainable=False)
    spec["actors"][1] = {
        "name": "Bob", "model": {"source": "tiny"}, "backend": "openai", "trainable": False,
        "api": {"baseUrl": url, "model": "m", "apiKeyEnv": key_env, "timeoutSeconds": 2, "maxRetries": 0},
        "sampling": {"maxNewTokens": 3},
    }
    spec["environments"][0]["systemPrompts"]["Bob"] = "You are Bob."
    return spec


def test_the_admin_password_never_reaches_a_server_even_when_listed(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv("TROUPE_ADMIN_PASSWORD", "admin-secret-123")
    monkeypatch.setenv("TROUPE_ACTOR_KEY_ENVS", "TROUPE_ADMIN_PASSWORD,TROUPE_TEST_BOB_KEY")  # an operator's mistake
    result = run_spec(_api_actor_spec(tmp_path, loopback, "TROUPE_ADMIN_PASSWORD"), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "actors.1.api.apiKeyEnv" and "Troupe's own secrets" in error["message"]
    assert _Recorder.seen == []


def test_an_unlisted_key_variable_or_host_is_refused_before_any_request(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv("HOME_CLOUD_KEY", "cloud-secret")
    monkeypatch.setenv("TROUPE_ACTOR_KEY_ENVS", "TROUPE_TEST_BOB_KEY")
    result = run_spec(_api_actor_spec(tmp_path, loopback, "HOME_CLOUD_KEY"), events=EventWriter(keep=True), work_dir=tmp_path)
    error = next(e for e in result.events if e["type"] == "error")
    assert (result.exit_code, error["field"]) == (2, "actors.1.api.apiKeyEnv") and "TROUPE_ACTOR_KEY_ENVS" in error["message"]

    monkeypatch.setenv("TROUPE_TEST_BOB_KEY", "k")
    monkeypatch.setenv("TROUPE_API_HOSTS", "api.example.com")
    result = run_spec(_api_actor_spec(tmp_path, loopback, "TROUPE_TEST_BOB_KEY"), events=EventWriter(keep=True), work_dir=tmp_path)
    error = next(e for e in result.events if e["type"] == "error")
    assert (result.exit_code, error["field"]) == (2, "actors.1.api.baseUrl") and "TROUPE_API_HOSTS" in error["message"]
    assert _Recorder.seen == []


def test_host_lists_match_names_ports_and_subdomains():
    assert host_allowed("https://api.openai.com/v1", ["api.openai.com"])
    assert host_allowed("http://10.0.0.5:8000/v1", ["10.0.0.5:8000"]) and not host_allowed("http://10.0.0.5:8001/v1", ["10.0.0.5:8000"])
    assert host_allowed("https://eu.llm.example.com/v1", ["*.example.com"]) and not host_allowed("https://example.com.evil.net/", ["*.example.com"])
    assert not host_allowed("http://127.0.0.1:9/v1", []) and not host_allowed("http://evil.net/", ["api.openai.com"])
    with pytest.raises(SpecError):
        check_api_actor({"baseUrl": "http://127.0.0.1/v1"}, 0, {"TROUPE_API_HOSTS": ""})


def test_capabilities_publish_the_operators_lists(tmp_path):
    env = {**os.environ, "TROUPE_ACTOR_KEY_ENVS": "OPENAI_API_KEY, TROUPE_ADMIN_PASSWORD", "TROUPE_API_HOSTS": "api.openai.com",
           "TROUPE_DATA_ROOTS": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "troupe", "capabilities", "--json"], env=env, capture_output=True, text=True, check=True)
    policy = json.loads(out.stdout.strip().splitlines()[-1])["hostPolicy"]
    assert policy == {"actorKeyEnvs": ["OPENAI_API_KEY"], "apiHosts": ["api.openai.com"], "dataRoots": [os.path.realpath(tmp_path)]}


def test_a_remote_environment_at_an_unlisted_host_is_refused_by_field(monkeypatch):
    """The trainer calls a remote environment's url itself: like an API actor's host, it must be listed."""
    from troupe.envs.remote.environment import RemoteEnvironment
    from troupe.spec import SpecError

    monkeypatch.setenv("TROUPE_API_HOSTS", "127.0.0.1")
    env = {"name": "r", "kind": "remote", "url": "http://evil.example:8100", "actors": ["a"], "dataset": "d"}
    with pytest.raises(SpecError) as info:
        RemoteEnvironment.from_spec(env, 2)
    assert info.value.field == "environments.2.url" and "TROUPE_API_HOSTS" in str(info.value)
    with pytest.raises(SpecError, match="TROUPE_API_HOSTS"):
        RemoteEnvironment.from_spec({**env, "url": "grpc://evil.example:8101"}, 2)
    RemoteEnvironment.from_spec({**env, "url": "http://127.0.0.1:9"}, 2).close()  # listed: accepted
