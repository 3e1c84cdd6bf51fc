"""The `tools` environment: the actor may call tools; each result enters the conversation as the
tool's message, and the episode ends at the first message without a tool call (its final answer,
which the spec's rewards score).

Tool calls use the format that chat templates render OpenAI `tool_calls` in (Qwen2.5, Hermes):

    <tool_call>{"name": "calculator", "arguments": {"expression": "12*7"}}</tool_call>

(`arguments` may also be a JSON string, as in OpenAI's API; a `<tool_call>` left open at the end of
a message, cut off or never closed, is still a call, as vLLM's Hermes parser reads it, so a broken
call gets an error back instead of passing for the final answer). Each result comes back as

    tool: <tool_response>{"name": "calculator", "content": "84"}</tool_response>

(`format_tool_call` and `format_tool_response` write both, e.g. for SFT rows that show tool use).
An episode that ends on a tool call (the actor's last turn of `maxTurns`, or a call after `maxCalls`)
has no final answer: that call is not run, and the environment closes the conversation with a note
without digits, so a conversation-scope reward never scores a tool's result as the actor's answer.

Tools: `calculator` (arithmetic on numbers: + - * / // % ** and parentheses, evaluated from the
parsed expression, never executed), `python` (runs `code` in the sandbox, returns its stdout), and
every public top-level function of the spec's `tools.code` (run in the sandbox with the call's
arguments as keyword arguments; its return value, as JSON or text, is the result), and the tools of the
spec's MCP servers (`tools.mcp`, mcp_tools.py: listed by each server, called through it). The tools and
how to call them are added to the actor's system prompt.

Per step the environment reports `tools/...` metrics with its actor's (`metrics`): calls and errors
per episode, the share of episodes with a successful call, and the share that gave a final answer.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import operator
import re
from typing import Any, Sequence

from .environment_api import Environment
from .mcp_tools import McpToolbox
from ..sandbox import SandboxError, describe_exit, python_executable
from ..spec import SpecError

# A closed call, or one left open at the end of the message (the second group).
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>|<tool_call>\s*(.*?)\s*\Z", re.DOTALL)
RESULT_CHARS = 2000
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 1e300

BUILTIN_DOCS = {
    "calculator": ('calculator(expression: str)', "evaluates arithmetic, e.g. {\"expression\": \"(3+4)*12\"}"),
    "python": ('python(code: str)', "runs Python code in a sandbox and returns what it prints"),
}

_USER_RUNNER = """
import json, sys
{code}
_call = json.loads(sys.stdin.read())
_result = globals()[_call["name"]](**_call["arguments"])
try:
    print(json.dumps(_result))
except TypeError:
    print(str(_result))
"""


class CalculatorError(ValueError):
    pass


def calculate(expression: str) -> float | int:
    """Arithmetic only: the expression is parsed, and only numbers and arithmetic operators are evaluated."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as e:
        raise CalculatorError(f"not an arithmetic expression: {expression!r}") from e

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
                raise CalculatorError("exponent too large")
            try:
                value = _BINARY[type(node.op)](left, right)
            except ZeroDivisionError as e:
                raise CalculatorError("division by zero") from e
            if isinstance(value, complex) or (isinstance(value, float) and not math.isfinite(value)) or abs(value) > MAX_MAGNITUDE:
                raise CalculatorError("result out of range")
            return value
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](ev(node.operand))
        raise CalculatorError(f"only numbers and + - * / // % ** are allowed: {expression!r}")

    value = ev(tree)
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2**53 else value


def parse_tool_calls(text: str) -> list[tuple[str, dict[str, Any]] | str]:
    """(name, arguments) per <tool_call>, or an error text for a call that is not valid JSON."""
    calls: list[tuple[str, dict[str, Any]] | str] = []
    for closed, open_ in _CALL.findall(text):
        body = closed or open_
        try:
            call = json.loads(body)
            name = call["name"]
            arguments = call.get("arguments", {})
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise ValueError("name must be a string and arguments an object")
            calls.append((name, arguments))
        except (ValueError, KeyError, TypeError) as e:
            calls.append(f"invalid tool call {body[:200]!r}: {e}")
    return calls


def format_tool_call(name: str, arguments: dict[str, Any]) -> str:
    """A call as the actor writes it (the inverse of `parse_tool_calls`)."""
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def format_tool_response(name: str, content: str) -> str:
    """A tool's result as the environment says it."""
    return "<tool_response>" + json.dumps({"name": name, "content": content}) + "</tool_response>"


# Closes an episode that ended on a tool call. No digits: a reward that reads the conversation's last
# message (math_answer's last number) must find no answer in it.
NO_ANSWER = "no final answer: the episode ended on a tool call, which was not run (turn or call limit reached)"


def user_tool_names(code: str) -> dict[str, str]:
    """Public top-level functions of the user's tool code -> their first docstring line (parsed, not run)."""
    tree = ast.parse(code)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            args = ", ".join(a.arg for a in node.args.args)
            doc = (ast.get_docstring(node) or "").strip().splitlines()
            out[node.name] = f"{node.name}({args})" + (f": {doc[0]}" if doc else "")
    return out


class ToolsEnvironment(Environment):
    speaker = "tool"

    def __init__(self, settings: dict[str, Any], path: str = "environments.tools"):
        self.builtin = list(settings.get("builtin", ["calculator"]))
        self.code = settings.get("code")
        self.max_calls = int(settings.get("maxCalls", 4))
        try:
            self.user_tools = user_tool_names(self.code) if self.code else {}
        except SyntaxError as e:
            raise SpecError.at(f"{path}.code", f"syntax error on line {e.lineno}: {e.msg}") from e
        clash = sorted(set(self.user_tools) & set(self.builtin))
        if clash:
            raise SpecError.at(f"{path}.code", f"defines {', '.join(clash)}, the name of a built-in tool it also lists")
        self.mcp_servers = list(settings.get("mcp") or [])
        self.mcp: McpToolbox | None = None
        self._path = path
        if not self.builtin and not self.user_tools and not self.mcp_servers:
            raise SpecError.at(path, "no tools: list a built-in one, define functions in tools.code or add an MCP server")

    def setup(self) -> None:
        super().setup()
        if self.mcp_servers:
            sandbox = self.sandbox
            config = {
                "limits": dataclasses.asdict(sandbox.limits),
                "readOnly": [str(p) for p in sandbox.read_only],
                "runDir": str(sandbox.run_dir) if sandbox.run_dir is not None else None,
                "python": True,
            }
            self.mcp = McpToolbox(self.mcp_servers, config, f"{self._path}.mcp", self.log)
            self.mcp.start()
            clash = sorted(set(self.mcp.tools) & (set(self.builtin) | set(self.user_tools)))
            if clash:
                self.mcp.close()
                raise SpecError.at(f"{self._path}.mcp", f"an MCP server serves {', '.join(clash)}, the name of a built-in or code tool of this environment")

    def close(self) -> None:
        if self.mcp is not None:
            self.mcp.close()
            self.mcp = None
        super().close()

    def describe(self) -> str:
        lines = ["You can call tools. To call one, write", '<tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>', "Tools:"]
        lines += [f"- {BUILTIN_DOCS[name][0]}: {BUILTIN_DOCS[name][1]}" for name in self.builtin]
        lines += [f"- {sig}" for sig in self.user_tools.values()]
        lines += [f"- {tool.signature()}" for tool in (self.mcp.tools.values() if self.mcp else ())]
        lines.append("Answer without a tool call when you are done.")
        return "\n".join(lines)

    def reset(self, episode: Any) -> None:
        actor = self.actors[0]
        own = episode.systems.get(actor)
        episode.systems[actor] = (own + "\n" if own else "") + self.describe()
        episode.state.update(calls=0, results=[], answered=False)
        return None

    def next_speaker(self, episode: Any, turn: int) -> str | None:
        return None if episode.done else self.actors[0]

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        """(ok, result text) of one tool call."""
        if name == "calculator" and "calculator" in self.builtin:
            try:
                return True, str(calculate(str(arguments.get("expression", ""))))
            except CalculatorError as e:
                return False, f"error: {e}"
        if name == "python" and "python" in self.builtin:
            return self._sandboxed([python_executable(), "-I", "-c", str(arguments.get("code", ""))], b"")
        if name in self.user_tools:
            program = _USER_RUNNER.format(code=self.code)
            return self._sandboxed([python_executable(), "-I", "-c", program], json.dumps({"name": name, "arguments": arguments}).encode())
        if self.mcp is not None and name in self.mcp.tools:
            return self.mcp.call(name, arguments)
        return False, f"error: no tool named {name!r}"

    def _sandboxed(self, argv: list[str], stdin: bytes) -> tuple[bool, str]:
        try:
            done = self.sandbox.run(argv, stdin=stdin)
        except SandboxError as e:
            return False, f"error: sandbox: {e}"
        if done.timed_out:
            return False, "error: time limit reached"
        if done.output_exceeded:
            return False, f"error: output limit reached ({self.sandbox.limits.output_bytes} bytes)"
        out = done.stdout.decode("utf-8", "replace")
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            if done.returncode is None or done.returncode < 0 or done.returncode > 128:
                return False, f"error: {describe_exit(done.returncode)} (a sandbox limit: CPU {self.sandbox.limits.cpu_seconds}s, memory {self.sandbox.limits.memory_mb} MB)"
            return False, f"error: exit code {done.returncode}: {err[-1] if err else ''}"
        return True, out.strip()[:RESULT_CHARS]

    def step(self, episode: Any, message: Any) -> str | None:
        calls = parse_tool_calls(message.text)
        if not calls:
            episode.state["answered"] = True  # the final answer: the rewards score it
            episode.finish()
            return None
        # A result the actor can never read is not worth running, and it must not become the
        # conversation's last message (see NO_ANSWER).
        last_turn = len(episode.own_messages(message.actor)) >= self.max_turns
        if episode.state["calls"] >= self.max_calls or last_turn:
            episode.finish()
            return NO_ANSWER
        responses = []
        for call in calls[: self.max_calls - episode.state["calls"]]:
            episode.state["calls"] += 1
            if isinstance(call, str):
                ok, result, name = False, f"error: {call}", ""
            else:
                name = call[0]
                ok, result = self.call(*call)
            episode.state["results"].append((name, ok, result))
            if not ok:
                self.log("warning", f'environment "{self.name}": row {episode.row_index}: tool {name or "?"} failed: {result[:300]}')
            responses.append(format_tool_response(name, result))
        return "\n".join(responses)

    def score(self, episode: Any) -> None:
        """The spec's rewards score the final answer (the actor's last message); nothing is added."""
        return None

    def metrics(self, episodes: Sequence[Any]) -> dict[str, float]:
        """The step's tool use: calls and failed calls per episode, the share of episodes with at least
        one successful call, and the share that ended with a final answer (not on a limit)."""
        n = max(len(episodes), 1)
        results = [e.state.get("results", []) for e in episodes]
        return {
            "tools/calls": sum(len(r) for r in results) / n,
            "tools/errors": sum(1 for r in results for _, ok, _ in r if not ok) / n,
            "tools/success_rate": sum(1 for r in results if any(ok for _, ok, _ in r)) / n,
            "tools/answer_rate": sum(1 for e in episodes if e.state.get("answered")) / n,
        }
