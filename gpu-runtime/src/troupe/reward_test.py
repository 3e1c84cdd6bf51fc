"""`python -m troupe.reward_test`: score a few calls of one reward, for the designer's Test button.

Reads one JSON request on stdin and writes one JSON answer on stdout:

    request: {"reward": RewardSpec (defaults filled), "calls": [{...keyword arguments}]}
    answer:  {"results": [{"score", "seconds"} | {"error", "seconds"}], "seconds": float}

Python rewards run in the same sandboxed worker as in training (`reward_worker.py` under bubblewrap,
see troupe.sandbox, with the reward's `timeoutSeconds` and `memoryMb`, scores checked the same way),
so a test shows exactly what a run would score and user code gets no more reach than in a run;
where no sandbox can start (and TROUPE_SANDBOX is not "off") each call answers that error; builtin
rewards are called in this process (they are ours and cannot hang). Nothing here knows who asked.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from typing import Any, Mapping

from .rewards.builtin import bind_reward
from .rewards.python_rewards import bind_python_reward
from .spec.runspec_types import Reward


def _builtin_results(reward: Mapping[str, Any], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    bound = bind_reward(Reward.from_dict(reward))
    results = []
    for call in calls:
        started = time.perf_counter()
        try:
            score = bound.score_many([call], [call])[0]
            results.append({"score": float(score), "seconds": time.perf_counter() - started})
        except Exception:  # noqa: BLE001 - reported per call, like the worker does
            results.append({"error": traceback.format_exc(), "seconds": time.perf_counter() - started})
    return results


def score_calls(reward: Mapping[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    if reward["source"]["kind"] == "python":
        bound = bind_python_reward(Reward.from_dict(reward))
        try:
            results = bound.run_calls(calls)
        finally:
            bound.close()  # the sandbox and everything the code started end with the test
        results = [{**r, "seconds": float(r.get("seconds", 0.0))} for r in results]
    elif reward["source"]["kind"] == "judge":
        # The Test button has no run, so no actors to judge with: say so per call rather than guess a score.
        results = [{"error": f'a judge reward asks the run\'s actor "{reward["source"]["actor"]}"; it is tested in a run, not alone', "seconds": 0.0} for _ in calls]
    else:
        results = _builtin_results(reward, calls)
    return {"results": results, "seconds": time.perf_counter() - started}


def main() -> int:
    request = json.loads(sys.stdin.read())
    answer = score_calls(request["reward"], request["calls"])
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
