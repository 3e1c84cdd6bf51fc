import io
import json
import math
from pathlib import Path

import pytest
from runtime_helpers import check_protocol, small_spec

import troupe.rewards.builtin as rewards_module
from troupe import EventWriter, run_spec

CORE_METRICS = {
    "reward/mean", "reward/std", "loss", "grad_norm", "clip_frac", "lr", "completion_len",
    "advantage/mean", "tokens_per_s", "step_time_s", "logprob_gap", "entropy",
}


def test_writer_flushes_lines_and_counts_from_seq_start(tmp_path: Path):
    path = tmp_path / "events.jsonl"
    with path.open("w") as f:
        w = EventWriter(f, seq_start=7)
        w.log("info", "hello")
        # Readable before the writer closes: each line is flushed.
        assert json.loads(path.read_text().splitlines()[0])["seq"] == 7
        w.metric(1, {"loss": 0.5}, actor="a")
        w.status("succeeded")
        with pytest.raises(RuntimeError, match="terminal"):
            w.log("info", "too late")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["seq"] for x in lines] == [7, 8, 9]
    assert all(isinstance(x["ts"], int) for x in lines)


def test_non_finite_metrics_are_dropped_with_a_warning(events_validator):
    stream = io.StringIO()
    w = EventWriter(stream, keep=True)
    w.metric(3, {"loss": math.nan, "kl": math.inf, "lr": 0.1})
    w.metric(4, {"loss": math.nan})
    metric = next(e for e in w.events if e["type"] == "metric")
    assert metric["values"] == {"lr": 0.1}
    warnings = [e for e in w.events if e["type"] == "log"]
    assert len(warnings) == 2  # once per metric name, not per step
    for line in stream.getvalue().splitlines():
        json.loads(line)  # strict JSON: no NaN tokens
        assert not list(events_validator.iter_errors(json.loads(line)))


def test_long_texts_are_cut_to_the_contract_limits(events_validator):
    w = EventWriter(keep=True)
    w.error("x" * 200_000, field="f" * 600, traceback="t" * 300_000)
    w.status("failed", "m" * 20_000)
    for e in w.events:
        assert not list(events_validator.iter_errors(e))
    assert w.events[0]["traceback"].endswith("t")  # the end of a traceback is what matters


def test_a_run_reports_every_step(events_validator, tmp_path: Path):
    spec = small_spec(steps=3, episodesPerStep=3)
    spec["actors"][0]["training"].update(klBeta=0.05, iterationsPerBatch=2, lossType="dapo")
    result = run_spec(spec, events=EventWriter(keep=True, seq_start=5), work_dir=tmp_path)
    assert result.state == "succeeded" and result.exit_code == 0, result.message
    events = result.events
    check_protocol(events, events_validator, seq_start=5)
    metrics = [e for e in events if e["type"] == "metric"]
    assert [m["step"] for m in metrics] == [1, 2, 3]
    for m in metrics:
        assert m["actor"] == "student"
        assert CORE_METRICS | {"kl", "reward/letter_match"} <= set(m["values"])
        assert m["values"]["logprob_gap"] < 1e-4
        assert m["values"]["lr"] == pytest.approx(3e-3)
    for step in (1, 2, 3):
        phases = [e["phase"] for e in events if e["type"] == "memory" and e["step"] == step]
        assert phases == ["rollout", "reward", "reference", "update"]
    memory = next(e for e in events if e["type"] == "memory")
    assert memory["device"] == "cpu" and memory["rssBytes"] > 10_000_000
    episodes = [e for e in events if e["type"] == "episode"]
    assert len(episodes) == 12  # episodesPerStep 3, rounded up to one whole group of 4 per step
    first = episodes[0]
    assert [(m["role"], m["trained"]) for m in first["messages"]] == [("user", False), ("assistant", True)]
    assert first["messages"][0]["content"].startswith("say ")
    assert set(first["rewardComponents"]) == {"letter_match"}
    # Whole groups: every sample of group 0 (one prompt), with the advantages normalised within it.
    assert [(e["step"], e["group"], e["sample"]) for e in episodes[:4]] == [(1, 0, s) for s in range(4)]
    assert len({e["messages"][0]["content"] for e in episodes[:4]}) == 1
    assert sum(e["advantage"] for e in episodes[:4]) == pytest.approx(0, abs=1e-4)
    logs = " ".join(e["message"] for e in events if e["type"] == "log")
    assert "parameters" in logs and "device cpu" in logs


def test_two_actors_two_environments_file_data_and_templates(events_validator, tmp_path: Path):
    (tmp_path / "words.jsonl").write_text("".join(json.dumps({"word": w, "answer": w[::-1]}) + "\n" for w in ["abc", "hello", "xyz"]))
    spec = small_spec(steps=2, promptsPerStep=3, episodesPerStep=8)
    spec["actors"].append({"name": "other", "model": {"source": "tiny", "preset": "tiny-char-4l"}, "training": {"lossType": "dr_grpo", "optimizer": "sgd"}})
    spec["datasets"].append({"name": "words", "source": {"kind": "file", "path": "words.jsonl", "format": "jsonl"}})
    spec["rewards"] += [
        {"name": "exact", "source": {"kind": "builtin", "name": "exact_match"}},
        {"name": "short", "source": {"kind": "builtin", "name": "length_penalty", "params": {"target": 3, "scale": 0.1}}},
    ]
    spec["environments"].append({
        "name": "reverse", "dataset": "words", "actors": ["other"],
        "prompt": {"template": "reverse {{ word }}:"},  # applyChatTemplate defaults to true: no template -> raw
        "systemPrompts": {"other": "Be brief."},
        "rewards": [{"reward": "exact", "weight": 1}, {"reward": "short", "weight": 0.5}],
        "weight": 2,
    })
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    by_actor = {}
    for m in (e for e in result.events if e["type"] == "metric"):
        by_actor.setdefault(m["actor"], []).append(m)
    assert {a: [m["step"] for m in ms] for a, ms in by_actor.items()} == {"student": [1, 2], "other": [1, 2]}
    assert {"reward/exact", "reward/short"} <= set(by_actor["other"][0]["values"])
    assert "reward/exact" not in by_actor["student"][0]["values"]
    episodes = [e for e in result.events if e["type"] == "episode" and e["environment"] == "reverse"]
    assert episodes, "the reverse environment (2 of 3 prompts) shows up in the episodes"
    roles = [m["role"] for m in episodes[0]["messages"]]
    assert roles == ["system", "user", "assistant"]
    assert episodes[0]["messages"][1]["content"].startswith("reverse ")
    ep = episodes[0]
    total = ep["rewardComponents"]["exact"] + 0.5 * ep["rewardComponents"]["short"]
    assert ep["reward"] == pytest.approx(total)


def test_a_crash_mid_run_ends_with_error_and_failed(events_validator, tmp_path: Path, monkeypatch):
    calls = {"n": 0}
    original = rewards_module.BUILTIN_REWARDS["letter_match"]

    def exploding(prompt, completion, row, params):
        calls["n"] += 1
        if calls["n"] > 8:  # step 2 (2 prompts x 4 samples per step)
            raise ZeroDivisionError("boom in a reward")
        return original.fn(prompt, completion, row, params)

    monkeypatch.setitem(rewards_module.BUILTIN_REWARDS, "letter_match", rewards_module.BuiltinReward("letter_match", exploding, original.params, original.fields))
    result = run_spec(small_spec(steps=4), work_dir=tmp_path)
    assert result.exit_code == 1 and result.state == "failed"
    check_protocol(result.events, events_validator)
    error = next(e for e in result.events if e["type"] == "error")
    assert error["message"] == "ZeroDivisionError: boom in a reward"
    assert "exploding" in error["traceback"] and "field" not in error
    assert [e["step"] for e in result.events if e["type"] == "metric"] == [1]


def test_invalid_spec_is_exit_2_with_the_field(events_validator):
    spec = small_spec()
    spec["actors"][0]["backend"] = "vllm"
    result = run_spec(spec)
    assert result.exit_code == 2 and result.state == "failed"
    check_protocol(result.events, events_validator)
    error = result.events[0]
    assert error["type"] == "error" and error["field"] == "actors.0.backend"
    # Names the missing package and how to install it (spec/vllm_rules.py).
    assert "the vllm package, which is not installed on this host" in error["message"]
    assert 'pip install "troupe[gpu]"' in error["message"]


def test_max_duration_stops_gracefully(events_validator, tmp_path: Path):
    result = run_spec(small_spec(steps=10_000, maxDurationSeconds=1), work_dir=tmp_path)
    assert result.state == "succeeded" and result.exit_code == 0
    assert 1 <= result.steps_completed < 10_000
    check_protocol(result.events, events_validator)
    assert "maxDurationSeconds=1" in result.events[-1]["message"]
    assert any(e["type"] == "log" and "maxDurationSeconds" in e["message"] for e in result.events)


def test_stop_request_cancels_between_steps(events_validator, tmp_path: Path):
    from troupe import StopRequest

    stop = StopRequest()
    writer = EventWriter(keep=True)
    original_metric = writer.metric

    def metric_then_stop(step, values, actor=None):
        if step == 2:
            stop.set("SIGTERM")
        return original_metric(step, values, actor)

    writer.metric = metric_then_stop
    result = run_spec(small_spec(steps=50), events=writer, work_dir=tmp_path, stop=stop)
    assert result.state == "cancelled" and result.exit_code == 3
    assert result.steps_completed == 2
    check_protocol(result.events, events_validator)
    assert result.events[-1]["message"] == "cancelled by SIGTERM after step 2 of 50"
