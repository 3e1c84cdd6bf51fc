"""Python rewards from the spec (`source.kind: "python"`), run out of process with limits.

Contract (the same for library code and code written in the UI):
    completion scope:   reward(prompt, completion, **row) -> float
    conversation scope: reward(conversation, actor_name, **row) -> float
      conversation = [{"actor": "user", "content": prompt}, {"actor": "Alice", "content": ...}, ...]
A function decorated with `@batched` (provided in the code's namespace) gets lists instead,
one entry per call, and returns a list. Named arguments win over row columns of the same name.

One worker process per reward per step scores every call of that step (`reward_worker.py`):
`memoryMb` of extra address space (RLIMIT_AS), `timeoutSeconds` per call, and the whole process
is killed when it outlives calls x timeoutSeconds + a start-up allowance. A call that raises,
times out, returns a non-number, or dies with its worker scores `failureScore` (default 0) and is reported as a `log`
event (level error) with the reward, the dataset row and the traceback. After
`maxFailuresInARow` failed calls in a row the run fails (RewardFailure, exit 1).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

FAILED_SCORE = 0.0
MAX_FAILURES_IN_A_ROW = 32
STARTUP_ALLOWANCE_SECONDS = 10.0
WORKER = Path(__file__).with_name("reward_worker.py")

Reporter = Callable[[str], None]


class RewardFailure(RuntimeError):
    """Too many failed calls in a row: the reward code is broken, the run stops."""


@dataclass
class PythonReward:
    name: str
    code: str
    entrypoint: str
    scope: str
    timeout_seconds: float
    memory_mb: int
    report: Reporter = field(default=lambda message: None)
    failures_in_a_row: int = 0
    failure_score: float = FAILED_SCORE  # the spec's failureScore
    max_failures_in_a_row: int = MAX_FAILURES_IN_A_ROW  # the spec's maxFailuresInARow
    fields: list[str] = field(default_factory=list)  # unknown until called: nothing checked up front

    # Single calls go through the batch path (one worker each): fine for tests, slow in a loop.
    def __call__(self, prompt: str, completion: str, row: Mapping[str, Any]) -> float:
        return self.score_many([{**row, "prompt": prompt, "completion": completion}], [row])[0]

    def score_conversation(self, conversation: list[dict[str, str]], actor_name: str, row: Mapping[str, Any]) -> float:
        return self.score_many([{**row, "conversation": conversation, "actor_name": actor_name}], [row])[0]

    def score_many(self, calls: list[dict[str, Any]], rows: list[Mapping[str, Any]]) -> list[float]:
        """Scores of `calls` (keyword arguments each); failures score FAILED_SCORE and are reported."""
        if not calls:
            return []
        results = self._run(calls)
        scores = []
        for call_rows, result in zip(rows, results):
            if "score" in result:
                self.failures_in_a_row = 0
                scores.append(float(result["score"]))
                continue
            self.failures_in_a_row += 1
            scores.append(self.failure_score)
            self.report(f'reward "{self.name}" failed on row {json.dumps(call_rows, default=str)[:2000]}; scored {self.failure_score:g}:\n{result["error"]}')
            if self.failures_in_a_row >= self.max_failures_in_a_row:
                raise RewardFailure(
                    f'reward "{self.name}" failed {self.failures_in_a_row} calls in a row; last error:\n{result["error"]}'
                )
        return scores

    def run_calls(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The worker's raw answer per call (`score` or `error`, and `seconds`), nothing counted or
        reported: what the designer's Test button shows."""
        return self._run(calls)

    def _run(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        request = {
            "code": self.code,
            "entrypoint": self.entrypoint,
            "scope": self.scope,
            "timeoutSeconds": self.timeout_seconds,
            "memoryMb": self.memory_mb,
            "calls": calls,
        }
        budget = self.timeout_seconds * (len(calls) + 1) + STARTUP_ALLOWANCE_SECONDS
        try:
            done = subprocess.run(
                [sys.executable, "-I", str(WORKER)],
                input=json.dumps(request, default=str),
                capture_output=True,
                text=True,
                timeout=budget,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:  # subprocess.run has killed the worker
            return [{"error": f"the reward worker ran past {budget:.0f}s and was killed"}] * len(calls)
        try:
            results = json.loads(done.stdout)["results"]
            if len(results) != len(calls):
                raise ValueError("wrong number of results")
            return results
        except (ValueError, KeyError, TypeError):
            tail = done.stderr[-4000:]
            return [{"error": f"the reward worker exited with code {done.returncode} without an answer:\n{tail}"}] * len(calls)


def bind_python_reward(reward_spec: Mapping[str, Any]) -> PythonReward:
    source = reward_spec["source"]
    return PythonReward(
        reward_spec["name"],
        source["code"],
        source["entrypoint"],
        reward_spec["scope"],
        float(reward_spec["timeoutSeconds"]),
        int(reward_spec["memoryMb"]),
        failure_score=float(reward_spec.get("failureScore", FAILED_SCORE)),
        max_failures_in_a_row=int(reward_spec.get("maxFailuresInARow", MAX_FAILURES_IN_A_ROW)),
    )
