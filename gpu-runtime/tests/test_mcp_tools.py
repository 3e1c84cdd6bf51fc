"""MCP tools in a `tools` environment (`tools.mcp`): a server written with the `mcp` package's own server API
(MCPServer) serves two tools; the environment lists them from the server, calls go through it, and the local
server runs inside the run's sandbox (it cannot read another run's folder or open a socket)."""

from __future__ import annotations

import json
import textwrap

import pytest
from sandbox_helpers import listener, run_folders

from troupe.collaborative import Episode, Message
from troupe.envs.mcp_tools import mcp_server_issues
from troupe.sandbox import Limits, Sandbox, sandbox_status
from troupe.spec import SpecError
from troupe.tools_env import ToolsEnvironment

pytest.importorskip("mcp", reason="the mcp package is a test dependency (gpu-runtime[test])")
needs_sandbox = pytest.mark.skipif(not sandbox_status().usable, reason="needs bubblewrap (scripts/setup.sh installs it)")
LIMITS = Limits(memory_mb=1024, cpu_seconds=20, processes=64, output_bytes=1_000_000, wall_seconds=30)

SERVER = textwrap.dedent('''
    import socket
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("troupe-test")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Adds two integers."""
        return a + b

    @app.tool()
    def peek(path: str) -> str:
        """Reads a file, or connects to a loopback port when path is 'net:PORT'."""
        if path.startswith("net:"):
            socket.create_connection(("127.0.0.1", int(path[4:])), timeout=2)
            return "connected"
        return open(path).read()

    app.run("stdio")
''')


def _env(run, **settings) -> ToolsEnvironment:
    (run / "server.py").write_text(SERVER)
    env = ToolsEnvironment({"builtin": ["calculator"], "maxCalls": 8, "mcp": [{"kind": "mcp", "command": ["python", "-I", "server.py"], "timeoutSeconds": 20}], **settings})
    env.name, env.actors, env.sandbox = "tools", ["agent"], Sandbox(LIMITS, run_dir=run)
    env.logs = []
    env.log_sink = lambda level, message: env.logs.append((level, message))
    return env


def _call(name: str, arguments: dict) -> str:
    return f'<tool_call>{json.dumps({"name": name, "arguments": arguments})}</tool_call>'


def _responses(reply: str) -> list[dict]:
    return [json.loads(r.removeprefix("<tool_response>").removesuffix("</tool_response>")) for r in reply.split("\n")]


@needs_sandbox
def test_an_mcp_server_serves_two_tools_to_a_tools_environment_from_inside_the_sandbox():
    with run_folders() as (_, run, other):
        env = _env(run)
        env.setup()
        try:
            assert set(env.mcp.tools) == {"add", "peek"}
            e = Episode(0, 0, 0, [], "", {}, {}, row={})
            env.reset(e)
            system = e.systems["agent"]
            assert "add(a, b): Adds two integers." in system and "peek(path)" in system and "calculator(expression: str)" in system
            reply = env.step(e, Message("agent", _call("add", {"a": 40, "b": 2}) + _call("calculator", {"expression": "6*7"}), [], []))
            assert _responses(reply) == [{"name": "add", "content": "42"}, {"name": "calculator", "content": "42"}]
            # Inside the sandbox: its own run folder is readable, another run's is not there at all, and no network.
            own = _responses(env.step(e, Message("agent", _call("peek", {"path": "server.py"}), [], [])))[0]
            assert "MCPServer" in own["content"]
            theirs = _responses(env.step(e, Message("agent", _call("peek", {"path": str(other / "secret.txt")}), [], [])))[0]
            assert theirs["content"].startswith("error:") and "secret of" not in theirs["content"]
            with listener() as port:
                import socket  # the positive control: the host reaches the port

                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                net = _responses(env.step(e, Message("agent", _call("peek", {"path": f"net:{port}"}), [], [])))[0]
            assert net["content"].startswith("error:") and "connected" not in net["content"]
            assert env.step(e, Message("agent", "The answer is 42.", [], [])) is None and e.done
            state = e.state["results"]
            assert [(name, ok) for name, ok, _ in state] == [("add", True), ("calculator", True), ("peek", True), ("peek", False), ("peek", False)]
        finally:
            env.close()


@needs_sandbox
def test_bad_arguments_are_the_actors_tool_error_not_the_runs():
    with run_folders() as (_, run, _other):
        env = _env(run)
        env.setup()
        try:
            ok, text = env.call("add", {"a": "x"})
            assert not ok and text.startswith("error:") and "a" in text
            ok, text = env.call("nope", {})
            assert not ok and "no tool named 'nope'" in text
        finally:
            env.close()


@needs_sandbox
def test_a_server_that_does_not_start_is_refused_by_field():
    with run_folders() as (_, run, _other):
        env = _env(run)
        env.mcp_servers = [{"kind": "mcp", "command": ["python", "-I", "missing.py"], "timeoutSeconds": 5}]
        with pytest.raises(SpecError) as info:
            env.setup()
        assert info.value.field == "environments.tools.mcp.0.command"


@needs_sandbox
def test_an_mcp_tool_named_like_a_builtin_is_refused():
    with run_folders() as (_, run, _other):
        env = _env(run, builtin=["calculator"])
        (run / "clash.py").write_text(SERVER.replace("def add(", "def calculator("))
        env.mcp_servers = [{"kind": "mcp", "command": ["python", "-I", "clash.py"], "timeoutSeconds": 20}]
        with pytest.raises(SpecError) as info:
            env.setup()
        assert info.value.field == "environments.tools.mcp" and "calculator" in str(info.value)


def test_a_remote_mcp_server_must_be_on_the_operators_host_list(monkeypatch):
    monkeypatch.setenv("TROUPE_API_HOSTS", "127.0.0.1")
    servers = [{"kind": "mcp", "url": "http://127.0.0.1:9000/mcp"}, {"kind": "mcp", "url": "https://tools.example.com/mcp"}]
    assert [f for f, _ in mcp_server_issues(servers, "environments.0.tools.mcp")] == ["environments.0.tools.mcp.1.url"]
    monkeypatch.setenv("TROUPE_API_HOSTS", "127.0.0.1,tools.example.com")
    assert mcp_server_issues(servers, "environments.0.tools.mcp") == []
    monkeypatch.delenv("TROUPE_API_HOSTS")
    assert len(mcp_server_issues(servers, "environments.0.tools.mcp")) == 2  # nothing listed: nothing reachable


@needs_sandbox
def test_a_run_whose_tools_environment_gets_its_tools_from_an_mcp_server(tmp_path):
    from runtime_helpers import TEST_THREADS

    from troupe import EventWriter, run_spec

    with run_folders() as (_, run, _other):
        (run / "server.py").write_text(SERVER)
        (run / "rows.jsonl").write_text("".join(json.dumps({"prompt": "add 2 and 3", "answer": "5"}) + "\n" for _ in range(4)))
        spec = {
            "specVersion": 1, "name": "mcp", "seed": 1,
            "actors": [{"name": "agent", "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": True,
                        "training": {"learningRate": 1e-3}, "sampling": {"temperature": 1.0, "maxNewTokens": 6}}],
            "datasets": [{"name": "rows", "source": {"kind": "file", "path": "rows.jsonl", "format": "jsonl"}}],
            "rewards": [{"name": "m", "source": {"kind": "builtin", "name": "math_answer", "params": {"field": "answer"}}}],
            "environments": [{"name": "calc", "kind": "tools", "dataset": "rows", "actors": ["agent"], "rewards": [{"reward": "m"}], "maxTurns": 2,
                              "tools": {"builtin": [], "mcp": [{"kind": "mcp", "command": ["python", "-I", "server.py"]}]}}],
            "sandbox": {"memoryMb": 1024, "cpuSeconds": 20, "processes": 64, "outputBytes": 100000},
            "algorithm": {"name": "grpo", "groupSize": 2},
            "trainer": {"steps": 1, "promptsPerStep": 2, "episodesPerStep": 2, "cpuThreads": TEST_THREADS},
        }
        result = run_spec(spec, events=EventWriter(keep=True), work_dir=run)
    assert result.state == "succeeded", result.message
    episodes = [e for e in result.events if e["type"] == "episode"]
    system = [m["content"] for e in episodes for m in e["messages"] if m["role"] == "system"]
    assert system and all("add(a, b): Adds two integers." in s and "peek(path)" in s for s in system)
    assert any("tools/calls" in e["values"] for e in result.events if e["type"] == "metric")
