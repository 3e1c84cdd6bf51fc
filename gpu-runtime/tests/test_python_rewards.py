"""Python rewards from the spec: out of process, time and memory limits, errors scored 0 and logged."""

import time

import pytest
from runtime_helpers import check_protocol, small_spec

from troupe import EventWriter, run_spec
from troupe.rewards.python_rewards import FAILED_SCORE, MAX_FAILURES_IN_A_ROW, PythonReward, RewardFailure


def reward(code, scope="completion", timeout=2.0, memory_mb=64, entrypoint="reward"):
    reports = []
    r = PythonReward("r", code, entrypoint, scope, timeout, memory_mb, report=reports.append)
    return r, reports


def calls(n):
    rows = [{"letter": "ab"[i % 2]} for i in range(n)]
    return [{**row, "prompt": "say", "completion": "a" * i} for i, row in enumerate(rows)], rows


def test_scores_come_back_in_order():
    r, reports = reward("def reward(prompt, completion, letter, **row):\n    return completion.count(letter)")
    assert r.score_many(*calls(4)) == [0.0, 0.0, 2.0, 0.0]
    assert reports == []


def test_batched_reward_gets_lists():
    r, _ = reward("@batched\ndef reward(prompt, completion, letter):\n    return [len(c) for c in completion]")
    assert r.score_many(*calls(3)) == [0.0, 1.0, 2.0]


def test_an_exception_scores_zero_and_is_reported_with_traceback_and_row():
    r, reports = reward("def reward(prompt, completion, **row):\n    return 1 / len(completion)")
    assert r.score_many(*calls(2)) == [FAILED_SCORE, 1.0]
    assert len(reports) == 1
    assert "ZeroDivisionError" in reports[0] and "Traceback" in reports[0] and '"letter": "a"' in reports[0]


def test_a_call_past_its_time_limit_is_stopped_and_the_next_still_runs():
    r, reports = reward("import time\ndef reward(prompt, completion, **row):\n    if not completion: time.sleep(30)\n    return 1", timeout=0.5)
    started = time.monotonic()
    assert r.score_many(*calls(2)) == [FAILED_SCORE, 1.0]
    assert time.monotonic() - started < 10
    assert "time limit" in reports[0]


def test_a_call_past_its_memory_limit_fails_alone():
    code = "def reward(prompt, completion, **row):\n    if not completion: x = bytearray(512 * 1024 * 1024)\n    return 2"
    r, reports = reward(code, memory_mb=64)
    assert r.score_many(*calls(2)) == [FAILED_SCORE, 2.0]
    assert "MemoryError" in reports[0]


def test_a_worker_that_dies_scores_zero_for_its_batch():
    r, reports = reward("import os\ndef reward(prompt, completion, **row):\n    os._exit(9)")
    assert r.score_many(*calls(2)) == [FAILED_SCORE, FAILED_SCORE]
    assert "exited with code 9" in reports[0]


def test_non_numbers_and_missing_entrypoints_are_failures():
    r, reports = reward("def reward(prompt, completion, **row):\n    return float('nan')")
    assert r.score_many(*calls(1)) == [FAILED_SCORE] and "not a finite number" in reports[0]
    r, reports = reward("def other(**kw):\n    return 1")
    assert r.score_many(*calls(1)) == [FAILED_SCORE] and 'no function "reward"' in reports[0]


def test_too_many_failures_in_a_row_raise():
    r, _ = reward("def reward(**kw):\n    raise ValueError('broken')")
    with pytest.raises(RewardFailure, match=f"failed {MAX_FAILURES_IN_A_ROW} calls in a row"):
        r.score_many(*calls(MAX_FAILURES_IN_A_ROW))


def test_a_run_with_python_rewards_logs_errors_and_finishes(tmp_path, events_validator):
    spec = small_spec(steps=2)
    spec["rewards"].append(
        {
            "name": "picky",
            "source": {
                "kind": "python",
                "code": "def reward(prompt, completion, letter, **row):\n    if letter == 'zz': raise KeyError(letter)\n"
                "    if completion.startswith(letter): raise RuntimeError('starts with ' + letter)\n    return len(completion) / 10",
            },
        }
    )
    spec["environments"][0]["rewards"].append({"reward": "picky", "weight": 0.5})
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    assert len(result.metrics("reward/picky")) == 2
    for e in result.events:
        if e["type"] == "episode":
            c = e["rewardComponents"]
            assert e["reward"] == pytest.approx(c["letter_match"] + 0.5 * c["picky"])


def test_a_syntax_error_is_a_spec_error_with_line_and_column(tmp_path):
    spec = small_spec(steps=1)
    spec["rewards"][0] = {"name": "letter_match", "source": {"kind": "python", "code": "def reward(:\n  pass"}}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "rewards.0.source.code" and "line 1, column" in error["message"]


def test_a_conversation_reward_in_a_collaborative_run(tmp_path):
    from collab_helpers import secret_digit_spec

    spec = secret_digit_spec(tmp_path, steps=1)
    spec["rewards"] = [
        {
            "name": "said",
            "scope": "conversation",
            "source": {
                "kind": "python",
                "code": "def reward(conversation, actor_name, digit, **row):\n"
                "    assert conversation[0]['actor'] == 'user' and [m['actor'] for m in conversation[1:]] == ['Alice', 'Bob']\n"
                "    return 1.0 if actor_name == 'Alice' else 0.5",
            },
        }
    ]
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    assert not [e for e in result.events if e["type"] == "log" and e["level"] == "error"]
    means = {e["actor"]: e["values"]["reward/mean"] for e in result.events if e["type"] == "metric"}
    assert means == {"Alice": 1.0, "Bob": 0.5}
