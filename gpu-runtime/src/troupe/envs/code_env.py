"""The `code` environment: the model writes a Python program, the environment runs it against the
dataset row's test cases in the sandbox and feeds the failures back for another try.

    row[testsField] = [{"input": "3 4\\n", "output": "7"}, ...]   (a list, or the same as a JSON string)

Each attempt: the program is the last ```python fenced block of the message (else the whole
message); each test runs it with the input on stdin under the run's `sandbox` limits; a test passes
when its stdout, stripped, equals the expected output, stripped. After a failing attempt the
environment answers with the first failures (input, expected, got or the error) and the actor tries
again, up to `maxTries` attempts. The reward component `pass_rate` is the last attempt's share of
passing tests. Anything the program does wrong (an exception, a limit reached, output past
`outputBytes`, a time-out) fails that test and is logged; the run goes on.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence

from .environment_api import Environment
from ..sandbox import SandboxError, describe_exit, python_executable

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
FEEDBACK_TESTS = 2  # failures shown in the feedback message
FEEDBACK_CHARS = 300  # of each expected/got/error text
PARALLEL_EPISODES = 4


def extract_program(text: str) -> str:
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else text


def parse_tests(value: Any) -> list[dict[str, str]] | None:
    """The row's test cases, or None when they are not a list of {input, output}."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, list) or not value:
        return None
    tests = []
    for t in value:
        if not isinstance(t, dict) or "output" not in t:
            return None
        tests.append({"input": str(t.get("input", "")), "output": str(t["output"])})
    return tests


@dataclass
class TestResult:
    passed: bool
    detail: str  # what went wrong ("" when passed)


def _short(text: str) -> str:
    return text if len(text) <= FEEDBACK_CHARS else text[:FEEDBACK_CHARS] + "..."


class CodeEnvironment(Environment):
    speaker = "tests"

    def __init__(self, settings: dict[str, Any]):
        self.tests_field = str(settings.get("testsField", "tests"))
        self.max_tries = int(settings.get("maxTries", 2))

    def check_row(self, row: dict[str, Any]) -> str | None:
        if self.tests_field not in row:
            return f'no column "{self.tests_field}" (environments.code.testsField) with the test cases'
        if parse_tests(row[self.tests_field]) is None:
            return f'column "{self.tests_field}" is not a list of {{"input", "output"}} test cases'
        return None

    def reset(self, episode: Any) -> None:
        episode.state.update(tries=0, pass_rate=0.0, tests=parse_tests(episode.row.get(self.tests_field)) or [])
        return None

    def next_speaker(self, episode: Any, turn: int) -> str | None:
        return None if episode.done or episode.state["tries"] >= self.max_tries else self.actors[0]

    def run_test(self, program: str, test: dict[str, str]) -> TestResult:
        try:
            done = self.sandbox.run([python_executable(), "-I", "-c", program], stdin=test["input"].encode())
        except SandboxError as e:
            return TestResult(False, f"sandbox error: {e}")
        if done.timed_out:
            return TestResult(False, f"time limit reached ({self.sandbox.limits.wall_seconds:g}s)")
        if done.output_exceeded:
            return TestResult(False, f"output limit reached ({self.sandbox.limits.output_bytes} bytes)")
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            if done.returncode is None or done.returncode < 0 or done.returncode > 128:
                limits = self.sandbox.limits
                return TestResult(False, f"{describe_exit(done.returncode)}: a sandbox limit (CPU {limits.cpu_seconds}s, memory {limits.memory_mb} MB, {limits.processes} processes)")
            return TestResult(False, f"exit code {done.returncode}: {err[-1] if err else 'no error output'}")
        got = done.stdout.decode("utf-8", "replace").strip()
        if got == test["output"].strip():
            return TestResult(True, "")
        return TestResult(False, f"expected {_short(test['output'].strip())!r}, got {_short(got)!r}")

    def attempt(self, episode: Any, message: Any) -> str | None:
        program = extract_program(message.text)
        tests = episode.state["tests"]
        results = [self.run_test(program, t) for t in tests]
        passed = sum(r.passed for r in results)
        episode.state["tries"] += 1
        episode.state["pass_rate"] = passed / max(len(tests), 1)
        failures = [(k, r) for k, r in enumerate(results) if not r.passed]
        for k, r in failures:
            self.log("warning", f'environment "{self.name}": row {episode.row_index}, try {episode.state["tries"]}, test {k + 1}: {r.detail}')
        if not failures:
            episode.finish()
            return f"All {len(tests)} tests passed."
        if episode.state["tries"] >= self.max_tries:
            episode.finish()
            return None
        lines = [f"{passed}/{len(tests)} tests passed. Failures:"]
        for k, r in failures[:FEEDBACK_TESTS]:
            lines.append(f"test {k + 1} (input {_short(tests[k]['input'].strip())!r}): {r.detail}")
        return "\n".join(lines) + "\nFix the program."

    def step(self, episode: Any, message: Any) -> str | None:
        return self.attempt(episode, message)

    def step_many(self, pairs: Sequence[tuple[Any, Any]]) -> list[Any]:
        with ThreadPoolExecutor(max_workers=PARALLEL_EPISODES) as pool:
            return list(pool.map(lambda p: self.attempt(*p), pairs))

    def score(self, episode: Any) -> dict[str, Any]:
        return {self.actors[0]: {"pass_rate": float(episode.state["pass_rate"])}}
