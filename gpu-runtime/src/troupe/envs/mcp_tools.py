"""Tools from Model Context Protocol servers, for the `tools` environment (`environments[].tools.mcp`).

The tool list comes from each server (`tools/list`), and every call goes through it (`tools/call`), with the
official `mcp` SDK (`pip install 'troupe[mcp]'`). A local server (`command`) runs inside the run's sandbox
(bubblewrap, no network, the run folder and this Python's packages read-only) through `troupe.sandbox.exec`; a
remote one (`url`, streamable HTTP) is reached from the runtime, and only at a host the operator lists in
TROUPE_API_HOSTS (host_policy.py), as for API actors.

The SDK is asynchronous and the environment's turns are not: the sessions live on one event loop in a thread
of their own, each server's session inside one task for its whole life (the SDK's task groups must be left by
the task that entered them), and calls are submitted to that loop with a deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urlparse

from ..sandbox.command import python_executable, release_uid, take_uid
from ..host.host_policy import API_HOSTS_VAR, env_list, host_allowed
from ..spec import SpecError

START_TIMEOUT_S = 60.0
RESULT_CHARS = 2000


def mcp_available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):
        return False


def mcp_server_issues(servers: Sequence[Mapping[str, Any]], path: str) -> list[tuple[str, str]]:
    """(field, message) for servers this host cannot reach: no SDK, or a url whose host the operator did not list."""
    out = []
    if servers and not mcp_available():
        out.append((path, "MCP tools need the mcp package on this host (pip install 'troupe[mcp]'); it is not installed here"))
    for i, server in enumerate(servers):
        if "url" in server and not host_allowed(server["url"], env_list(API_HOSTS_VAR)):
            host = (urlparse(server["url"]).hostname or "").lower()
            out.append((f"{path}.{i}.url", f"host {host} is not one a run may call from this runner: the operator lists hosts in {API_HOSTS_VAR} on the runner host"))
    return out


@dataclass(frozen=True)
class McpTool:
    name: str
    description: str
    parameters: tuple[str, ...]
    server: int

    def signature(self) -> str:
        return f"{self.name}({', '.join(self.parameters)})" + (f": {self.description.splitlines()[0]}" if self.description else "")


def _result_text(result: Any) -> str:
    parts = []
    for item in getattr(result, "content", None) or []:
        text = getattr(item, "text", None)
        parts.append(text if text is not None else f"[{getattr(item, 'type', 'content')}]")
    if not parts and getattr(result, "structured_content", None) is not None:
        parts.append(json.dumps(result.structured_content))
    return "\n".join(parts)


class McpToolbox:
    """Open sessions with the spec's MCP servers; `call` runs one tool call and returns (ok, text)."""

    def __init__(self, servers: Sequence[Mapping[str, Any]], sandbox_config: Mapping[str, Any], path: str, log: Callable[[str, str], Any]):
        self.servers = [dict(s) for s in servers]
        self.sandbox_config = dict(sandbox_config)
        self.path = path
        self.log = log
        self.tools: dict[str, McpTool] = {}
        self._sessions: dict[int, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._tasks: list[asyncio.Future[Any]] = []
        self._uids: list[int | None] = []
        self._stderrs: dict[int, Any] = {}

    # --- lifecycle --------------------------------------------------------------------------------------
    def start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="troupe-mcp", daemon=True)
        self._thread.start()
        self._stop = asyncio.run_coroutine_threadsafe(self._make_stop(), self._loop).result()
        for i, server in enumerate(self.servers):
            ready: asyncio.Future[Any] = asyncio.run_coroutine_threadsafe(self._ready_future(), self._loop).result()
            self._tasks.append(asyncio.run_coroutine_threadsafe(self._serve(i, server, ready), self._loop))
            try:
                listed = asyncio.run_coroutine_threadsafe(self._wait(ready), self._loop).result(timeout=START_TIMEOUT_S)
            except Exception as e:  # noqa: BLE001 - a server that cannot start is the spec's problem, by field
                self.close()
                where = f"{self.path}.{i}." + ("command" if "command" in server else "url")
                tail = self._stderr_tail(i)
                raise SpecError.at(where, f"the MCP server did not start: {_leaf(e)}" + (f"; its stderr: {tail}" if tail else "")) from e
            for tool in listed:
                if tool.name in self.tools:
                    self.close()
                    raise SpecError.at(f"{self.path}.{i}", f"MCP tool {tool.name!r} is also served by server {self.tools[tool.name].server}")
                self.tools[tool.name] = tool

    async def _make_stop(self) -> asyncio.Event:
        return asyncio.Event()

    async def _ready_future(self) -> asyncio.Future[Any]:
        return asyncio.get_running_loop().create_future()

    @staticmethod
    async def _wait(ready: asyncio.Future[Any]) -> Any:
        return await ready

    def close(self) -> None:
        if self._loop is None:
            return
        loop, self._loop = self._loop, None
        if self._stop is not None:
            loop.call_soon_threadsafe(self._stop.set)
        for task in self._tasks:
            try:
                task.result(timeout=10)
            except Exception:  # noqa: BLE001 - closing: a server that died already is fine
                pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        loop.close()
        for slot in self._uids:
            release_uid(slot)
        self._uids = []
        for handle in self._stderrs.values():
            handle.close()
        self._stderrs = {}

    # --- one server's session, from open to close, in one task ---------------------------------------------
    async def _serve(self, index: int, server: Mapping[str, Any], ready: asyncio.Future[Any]) -> None:
        from mcp import ClientSession

        try:
            async with self._transport(server, index) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    self._sessions[index] = session
                    tools = [
                        McpTool(t.name, (t.description or "").strip(), tuple((t.input_schema or {}).get("properties", {}).keys()), index)
                        for t in listed.tools
                    ]
                    ready.set_result(tools)
                    assert self._stop is not None
                    await self._stop.wait()
        except BaseException as e:  # noqa: BLE001 - reported to start(), or to the calls that follow
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else RuntimeError(repr(e)))
            self._sessions.pop(index, None)
            if not isinstance(e, Exception):
                raise

    def _stderr(self, index: int) -> Any:
        """The server's stderr, kept in a file: not the run's log (a server's logging would flood it), but its
        last lines explain a server that does not start."""
        handle = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self._stderrs[index] = handle
        return handle

    def _stderr_tail(self, index: int) -> str:
        handle = self._stderrs.get(index)
        if handle is None:
            return ""
        handle.seek(0)
        lines = [line for line in handle.read().splitlines() if line.strip()]
        return " | ".join(lines[-3:])

    def _transport(self, server: Mapping[str, Any], index: int) -> Any:
        if "url" in server:
            from mcp.client.streamable_http import streamablehttp_client

            return streamablehttp_client(server["url"])
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        uid, slot = take_uid() if os.geteuid() == 0 else (None, None)
        self._uids.append(slot)
        config = {**self.sandbox_config, "uid": uid, "env": dict(server.get("env") or {})}
        command = list(server["command"])
        if command[0] in ("python", "python3"):  # this runtime's interpreter, with its packages (mcp among them)
            command[0] = python_executable()
        params = StdioServerParameters(
            command=sys.executable,
            args=["-I", "-m", "troupe.sandbox.exec", json.dumps(config), "--", *command],
            # -I: this interpreter's own site-packages (where troupe is installed), no PYTHON* variables.
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        return stdio_client(params, errlog=self._stderr(index))

    # --- calls ---------------------------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        tool = self.tools.get(name)
        session = self._sessions.get(tool.server) if tool else None
        if tool is None:
            return False, f"error: no tool named {name!r}"
        if session is None or self._loop is None:
            return False, f"error: the MCP server of {name!r} is gone"
        timeout = float(self.servers[tool.server].get("timeoutSeconds", 30))
        future = asyncio.run_coroutine_threadsafe(session.call_tool(name, arguments), self._loop)
        try:
            result = future.result(timeout=timeout)
        except TimeoutError:
            future.cancel()
            return False, f"error: the MCP tool {name} did not answer within {timeout:g} s"
        except Exception as e:  # noqa: BLE001 - a failed call is the actor's tool error, not the run's
            return False, f"error: MCP: {type(e).__name__}: {e}"
        text = _result_text(result)[:RESULT_CHARS]
        if getattr(result, "is_error", False):
            return False, f"error: {text}"
        return True, text


def _leaf(error: BaseException) -> str:
    """The first real error inside the SDK's exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"
