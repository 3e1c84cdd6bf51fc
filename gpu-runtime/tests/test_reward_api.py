"""`from troupe import reward`: decorated rewards, the UI code contract, failures, judges calling actors."""

import copy
import time

import pytest
from runtime_helpers import small_spec

from troupe.spec.runspec_types import Reward
from troupe import reward, run_spec
from troupe.rewards.python_rewards import RewardFailure, bind_python_reward
from troupe.rewards.reward_api import RewardFunction, bind_in_process, merge_rewards
from troupe.spec import validate_spec


@reward(scope="completion", weight=0.5)
def starts_with_letter(prompt, completion, **row):
    return 1.0 if completion[:1] == row["letter"] else 0.0


@reward(batched=True, name="length_score")
def short(prompt, completion, **row):
    return [1.0 / (1 + len(c)) for c in completion]


@reward
def plain(prompt, completion, **row):
    return float(len(completion))


def _spec_entry(fn: RewardFunction) -> dict:
    doc = small_spec()
    doc["rewards"] = [fn.spec_entry()]
    doc["environments"][0]["rewards"] = [{"reward": fn.name, "weight": 1}]
    return validate_spec(doc)["rewards"][0]


def test_decorator_keeps_settings_and_the_plain_function():
    assert isinstance(plain, RewardFunction) and plain.name == "plain" and plain.scope == "completion" and not plain.batched
    assert short.name == "length_score" and short.batched and starts_with_letter.weight == 0.5
    assert starts_with_letter("say a:", "aaa", letter="a") == 1.0
    with pytest.raises(ValueError, match="scope"):
        reward(scope="episode")


CALLS = [{"prompt": "say a:", "completion": "aab", "letter": "a"}, {"prompt": "say b:", "completion": "x", "letter": "b"}]


@pytest.mark.parametrize("fn", [starts_with_letter, short], ids=["single", "batched"])
def test_recorded_code_runs_as_ui_code_with_the_same_scores(fn):
    """The same contract: the spec entry's code, run out of process like code from the UI, agrees."""
    entry = _spec_entry(fn)
    assert "@reward" not in entry["source"]["code"]
    in_process = bind_in_process(fn, entry).score_many(CALLS, CALLS)
    out_of_process = bind_python_reward(Reward.from_dict(entry)).score_many(CALLS, CALLS)
    assert in_process == out_of_process
    assert in_process == ([1.0, 0.0] if fn is starts_with_letter else [0.25, 0.5])


def test_a_failing_call_is_logged_with_its_row_and_scored_the_configured_value():
    @reward(failure_score=-1.0, max_failures_in_a_row=3, timeout_seconds=0.2)
    def fragile(prompt, completion, **row):
        if completion == "boom":
            raise KeyError("no such column")
        if completion == "slow":
            time.sleep(2)
        return 1.0

    entry = {**fragile.spec_entry(), "memoryMb": 512}
    bound = bind_in_process(fragile, entry)
    reports = []
    bound.report = reports.append
    calls = [{"prompt": "p", "completion": c, "letter": "q"} for c in ("ok", "boom", "slow", "ok")]
    started = time.monotonic()
    assert bound.score_many(calls, calls) == [1.0, -1.0, -1.0, 1.0]
    assert time.monotonic() - started < 1.5  # the sleeping call was cut at 0.2 s
    assert len(reports) == 2
    assert "KeyError" in reports[0] and '"completion": "boom"' in reports[0] and "scored -1" in reports[0]
    assert "time limit" in reports[1]
    # A success resets the count; three failures in a row stop the run.
    with pytest.raises(RewardFailure, match='"fragile" failed 3 calls in a row'):
        bound.score_many([calls[1]] * 3, [calls[1]] * 3)


def test_merge_fills_environments_without_rewards_and_keeps_named_ones():
    doc = small_spec()
    doc["environments"][0]["rewards"] = []
    merged = merge_rewards(doc, [starts_with_letter, short])
    assert [r["name"] for r in merged["rewards"]] == ["letter_match", "starts_with_letter", "length_score"]
    assert merged["environments"][0]["rewards"] == [{"reward": "starts_with_letter", "weight": 0.5}, {"reward": "length_score", "weight": 1.0}]
    assert doc["environments"][0]["rewards"] == []  # the caller's spec is not touched
    validate_spec(merged)


def test_a_run_with_library_rewards_logs_each_component(tmp_path):
    spec = small_spec(steps=2)
    spec["environments"][0]["rewards"] = []
    result = run_spec(spec, work_dir=tmp_path, rewards=[starts_with_letter, short])
    assert result.state == "succeeded", result.message
    first = next(e for e in result.events if e["type"] == "metric")["values"]
    assert {"reward/starts_with_letter", "reward/length_score"} <= first.keys()
    # The combined reward is the weighted sum of the components (same samples, linear).
    assert first["reward/mean"] == pytest.approx(0.5 * first["reward/starts_with_letter"] + first["reward/length_score"], rel=1e-6)


def test_too_many_failures_fail_the_run_with_a_clear_error(tmp_path):
    @reward(max_failures_in_a_row=5)
    def broken(prompt, completion, **row):
        return row["no_such_column"]

    spec = small_spec(steps=2)
    spec["environments"][0]["rewards"] = []
    result = run_spec(spec, work_dir=tmp_path, rewards=[broken])
    assert result.state == "failed"
    assert 'reward "broken" failed 5 calls in a row' in result.message and "KeyError" in result.message
    logged = [e for e in result.events if e["type"] == "log" and e["level"] == "error"]
    assert logged and "no_such_column" in logged[0]["message"]


def test_a_judge_reward_asks_a_frozen_actor_to_generate(tmp_path):
    asked: list[tuple[list[str], list[str]]] = []

    @reward(batched=True)
    def judged(prompt, completion, actors, **row):
        verdicts = actors["judge"].generate([f"is {c!r} right? " for c in completion], max_new_tokens=3)
        asked.append((list(completion), verdicts))
        return [1.0 if v[:1] == c[:1] else 0.0 for v, c in zip(verdicts, completion)]

    spec = small_spec(steps=2)
    judge = copy.deepcopy(spec["actors"][0])
    judge.update(name="judge", trainable=False)
    spec["actors"].append(judge)
    spec["environments"][0]["rewards"] = []
    result = run_spec(spec, work_dir=tmp_path, rewards=[judged])
    assert result.state == "succeeded", result.message
    assert len(asked) == 2  # one batched call per step
    for completions, verdicts in asked:
        assert len(verdicts) == len(completions) == 8
        assert all(isinstance(v, str) and len(v) <= 3 for v in verdicts)  # the judge's own tokens, capped at 3
    assert len(result.metrics("reward/judged")) == 2
