"""`python -m troupe.reward_test`: the designer's Test button, through the real sandboxed worker."""

import json
import os
import subprocess
import sys

from troupe.reward_test import score_calls

GOOD = "def reward(prompt, completion, answer, **row):\n    return 1.0 if completion.strip() == answer else 0.0\n"


def _python_reward(code: str, **extra):
    return {"name": "r", "source": {"kind": "python", "code": code, "entrypoint": "reward"}, "scope": "completion",
            "timeoutSeconds": 2, "memoryMb": 256, **extra}


def test_scores_each_call_with_its_time():
    answer = score_calls(_python_reward(GOOD), [
        {"prompt": "say a:", "completion": "a", "answer": "a"},
        {"prompt": "say b:", "completion": "x", "answer": "b"},
    ])
    assert [r["score"] for r in answer["results"]] == [1.0, 0.0]
    assert all(r["seconds"] >= 0 for r in answer["results"])
    assert answer["seconds"] >= sum(r["seconds"] for r in answer["results"])


def test_a_bug_comes_back_as_the_traceback_of_that_call():
    code = "def reward(prompt, completion, **row):\n    return 1 / len(completion)\n"
    answer = score_calls(_python_reward(code), [{"prompt": "p", "completion": "ab"}, {"prompt": "p", "completion": ""}])
    assert answer["results"][0]["score"] == 0.5
    error = answer["results"][1]["error"]
    assert "ZeroDivisionError" in error and 'File "<reward code>", line 2, in reward' in error


def test_time_limit_applies_per_call():
    code = "import time\ndef reward(prompt, completion, **row):\n    time.sleep(5)\n    return 1.0\n"
    answer = score_calls(_python_reward(code, timeoutSeconds=0.3), [{"prompt": "p", "completion": "c"}])
    assert "exceeded its time limit" in answer["results"][0]["error"]


def test_builtin_rewards_are_scored_too():
    reward = {"name": "m", "source": {"kind": "builtin", "name": "exact_match", "params": {}}, "scope": "completion",
              "timeoutSeconds": 10, "memoryMb": 512}
    answer = score_calls(reward, [{"prompt": "p", "completion": "yes", "answer": "yes"}, {"prompt": "p", "completion": "no", "answer": "yes"}])
    assert [r["score"] for r in answer["results"]] == [1.0, 0.0]


def test_module_cli_reads_stdin_and_writes_one_json_answer():
    request = {"reward": _python_reward(GOOD), "calls": [{"prompt": "say a:", "completion": "a", "answer": "a"}]}
    done = subprocess.run([sys.executable, "-m", "troupe.reward_test"], input=json.dumps(request), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["score"] == 1.0


def test_the_test_button_runs_code_in_the_same_sandbox():
    from troupe.sandbox import sandbox_status

    if sandbox_status().mode != "bwrap" or not sandbox_status().usable:
        import pytest

        pytest.skip("needs bubblewrap")
    code = ("import os, socket\ndef reward(prompt, completion, **row):\n"
            "    if completion == 'id': return float(os.getuid() == 0 or os.geteuid() == 0)\n"
            "    if completion == 'env': return float(len([k for k in os.environ if 'URL' in k or 'KEY' in k]))\n"
            "    if completion == 'net': socket.create_connection(('127.0.0.1', 6379), timeout=2)\n"
            "    if completion == 'big': return 1e308\n"
            "    return len(open('/etc/shadow').read())\n")
    request = {"reward": _python_reward(code), "calls": [{"prompt": "p", "completion": c} for c in ("id", "env", "net", "big", "shadow")]}
    env = {**os.environ, "DATABASE_URL": "postgresql://secret", "OPENAI_API_KEY": "sk-secret"}
    done = subprocess.run([sys.executable, "-m", "troupe.reward_test"], input=json.dumps(request), capture_output=True, text=True, timeout=120, env=env)
    results = json.loads(done.stdout)["results"]
    assert results[0]["score"] == 0.0 and results[1]["score"] == 0.0  # not root; no secrets in its environment
    assert "ConnectionRefusedError" in results[2]["error"]
    assert "outside the accepted range" in results[3]["error"]
    assert "FileNotFoundError" in results[4]["error"]
