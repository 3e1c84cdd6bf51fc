"""Pause / resume / stop-after-step through the control channel, checkpoints with retention, and
resume: N steps straight and N/2 + resume to N give the same per-step metrics, bitwise on CPU."""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from collab_helpers import secret_digit_spec
from runtime_helpers import check_protocol, read_events, small_spec
from troupe.checkpointing import list_checkpoints
from troupe.control import RunControl, command_problem
from troupe.events import EventWriter
from troupe.run import EXIT_STOPPED, run_spec

# Metrics that measure wall time differ between any two runs; everything else must be equal.
TIMING = {"step_time_s", "tokens_per_s"}  # and every time/<phase>_s (phase_clock.py)


def per_step(events: list[dict]) -> dict[tuple[int, str | None], dict[str, float]]:
    return {
        (e["step"], e.get("actor")): {k: v for k, v in e["values"].items() if k not in TIMING and not k.startswith("time/")}
        for e in events
        if e["type"] == "metric"
    }


def episodes(events: list[dict]) -> list[tuple]:
    return [(e["step"], e["group"], e["sample"], json.dumps(e["messages"]), e["reward"]) for e in events if e["type"] == "episode"]


def test_control_lines_are_checked_against_the_contract():
    assert command_problem('{"command":"pause"}') is None
    assert "not JSON" in command_problem("pause")
    assert "command" in command_problem('{"command":"explode"}')
    assert command_problem('{"command":"pause","extra":1}') is not None
    control = RunControl()
    control.handle_line('{"command":"nope"}\n')
    control.handle_line('{"command":"pause"}\n')
    assert control.paused and len(control.take_rejected()) == 1
    control.handle_line('{"command":"stop_after_step"}')
    assert control.stop_requested and not control.paused  # a stop ends a pause


@pytest.mark.parametrize("lora", [False, True], ids=["full-weights", "lora"])
def test_resume_reproduces_the_straight_run_bitwise(tmp_path: Path, lora: bool):
    def spec():
        s = small_spec(steps=4, checkpointEvery=2)
        # Python reward that varies within groups, so updates are real and advantages non-zero.
        s["rewards"][0] = {"name": "letter_match", "source": {"kind": "python", "code": "def reward(prompt, completion, **row):\n    return len(set(completion)) / 8"}}
        if lora:
            s["actors"][0]["training"].update(lora={"rank": 4, "alpha": 8, "dropout": 0.0, "targetModules": ["q_proj", "v_proj"]}, klBeta=0.1, learningRate=0.01)
        else:
            s["actors"][0]["training"]["klBeta"] = 0.05
        return s

    straight = run_spec(spec(), work_dir=tmp_path / "straight")
    assert straight.state == "succeeded", straight.message

    kept = EventWriter(keep=True)
    first = run_spec(spec(), events=kept, work_dir=tmp_path / "resumed", stop=_StopAfterStep(kept, 2))
    assert first.state == "cancelled" and first.steps_completed == 2, first.message
    assert [s for s, _ in list_checkpoints(tmp_path / "resumed" / "checkpoints")] == [2]
    second = run_spec(spec(), work_dir=tmp_path / "resumed", resume="latest")
    assert second.state == "succeeded", second.message
    assert any("resumed from" in e.get("message", "") for e in second.events if e["type"] == "log")

    want = per_step(straight.events)
    got = {**{k: v for k, v in per_step(first.events).items() if k[0] <= 2}, **per_step(second.events)}
    assert sorted(got) == sorted(want) and len(want) == 4
    for key in want:  # tolerance: none (bitwise equal floats), same machine, same thread count
        assert got[key] == want[key], (key, got[key], want[key])
    assert [e for e in episodes(second.events)] == [e for e in episodes(straight.events) if e[0] > 2]


class _StopAfterStep:
    """Like a SIGTERM arriving during step `n`: the loop stops at the boundary after it."""

    def __init__(self, events: EventWriter, n: int):
        self.events, self.n, self.reason = events, n, "test"

    def is_set(self) -> bool:
        return any(e["type"] == "metric" and e["step"] >= self.n for e in self.events.events)


def test_two_trainable_actors_in_a_conversation_resume_bitwise(tmp_path: Path):
    """Alice and Bob, both trained: both optimizers, the schedule sampler and the row order come back."""

    def spec(folder: Path):
        folder.mkdir(exist_ok=True)
        s = secret_digit_spec(folder, steps=4)  # writes its dataset into the work dir
        s["trainer"].update(checkpointEvery=2, cpuThreads=1)
        return s

    straight = run_spec(spec(tmp_path / "straight"), work_dir=tmp_path / "straight")
    assert straight.state == "succeeded", straight.message
    kept = EventWriter(keep=True)
    first = run_spec(spec(tmp_path / "resumed"), events=kept, work_dir=tmp_path / "resumed", stop=_StopAfterStep(kept, 2))
    assert first.steps_completed == 2
    assert sorted({e["actor"] for e in first.events if e["type"] == "checkpoint"}) == ["Alice", "Bob"]
    second = run_spec(spec(tmp_path / "resumed"), work_dir=tmp_path / "resumed", resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{k: v for k, v in per_step(first.events).items() if k[0] <= 2}, **per_step(second.events)}
    assert got == want and {actor for _, actor in want} == {"Alice", "Bob"}
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]


def test_cancel_while_paused_ends_cancelled_without_a_step(tmp_path: Path):
    control = RunControl()
    control.apply("pause")
    stop = _Flag()
    events = EventWriter(keep=True)
    done: dict = {}
    thread = threading.Thread(target=lambda: done.update(result=run_spec(small_spec(steps=5), events=events, work_dir=tmp_path, stop=stop, control=control)))
    thread.start()
    _wait_for(lambda: any(e["type"] == "status" and e["state"] == "paused" for e in events.events))
    stop.reason = "SIGTERM"  # what the CLI's signal handler does on a cancel
    thread.join(timeout=60)
    result = done["result"]
    assert result.state == "cancelled" and result.steps_completed == 0
    assert not any(e["type"] == "metric" for e in result.events)


class _Flag:
    reason: str | None = None

    def is_set(self) -> bool:
        return self.reason is not None


def test_retention_keeps_the_newest_checkpoints(tmp_path: Path, events_validator):
    result = run_spec(small_spec(steps=4, checkpointEvery=1, keepCheckpoints=2), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    assert [s for s, _ in list_checkpoints(tmp_path / "checkpoints")] == [3, 4]
    saved = [e for e in result.events if e["type"] == "checkpoint"]
    assert [e["step"] for e in saved] == [1, 2, 3, 4]
    assert all(e["actor"] == "student" and e["sizeBytes"] > 1000 and Path(e["path"]).name == "student" for e in saved)
    # Each deletion is an event (contracts `checkpoint_pruned`), after the checkpoint that made room for it.
    pruned = [e for e in result.events if e["type"] == "checkpoint_pruned"]
    assert [(e["step"], Path(e["path"]).name, e["keepCheckpoints"]) for e in pruned] == [(1, "step-1", 2), (2, "step-2", 2)]
    assert all(not Path(e["path"]).exists() for e in pruned)
    seq_of_saved = {e["step"]: e["seq"] for e in saved}
    assert [e["seq"] > seq_of_saved[e["step"] + 2] for e in pruned] == [True, True]


def test_pause_waits_at_a_step_boundary_then_resume_and_stop_after_step(tmp_path: Path, events_validator):
    control = RunControl()
    control.apply("pause")  # paused before step 1: nothing trains until resumed
    events = EventWriter(keep=True)
    done: dict = {}
    thread = threading.Thread(target=lambda: done.update(result=run_spec(small_spec(steps=50), events=events, work_dir=tmp_path, control=control)))
    thread.start()
    _wait_for(lambda: any(e["type"] == "status" and e["state"] == "paused" for e in events.events))
    time.sleep(0.5)
    assert not any(e["type"] == "metric" for e in events.events)  # waiting, not training
    control.apply("resume")
    _wait_for(lambda: sum(e["type"] == "metric" for e in events.events) >= 2)
    control.apply("pause")
    _wait_for(lambda: sum(e["type"] == "status" and e["state"] == "paused" for e in events.events) == 2)
    steps_when_paused = max(e["step"] for e in events.events if e["type"] == "metric")
    time.sleep(0.5)
    assert max(e["step"] for e in events.events if e["type"] == "metric") == steps_when_paused
    control.apply("stop_after_step")
    thread.join(timeout=60)
    result = done["result"]
    assert result.state == "stopped" and result.exit_code == EXIT_STOPPED and result.steps_completed == steps_when_paused
    check_protocol(result.events, events_validator)
    states = [e["state"] for e in result.events if e["type"] == "status"]
    assert states == ["paused", "running", "paused", "stopped"]
    assert [s for s, _ in list_checkpoints(tmp_path / "checkpoints")] == [steps_when_paused]  # saved on stop


def test_cli_control_file_stops_after_a_step_and_resume_latest_finishes(tmp_path: Path):
    spec_path = tmp_path / "spec.json"
    # Enough steps that the run cannot finish between its first metric and reading the command (with 6,
    # an idle machine finished them all first); the resumed run does the rest.
    steps = 30
    spec_path.write_text(json.dumps(small_spec(steps=steps)))
    control_file = tmp_path / "control.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "troupe", "run", str(spec_path), "--events", str(tmp_path / "a.jsonl"), "--control-file", str(control_file)]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    _wait_for(lambda: (tmp_path / "a.jsonl").exists() and '"type":"metric"' in (tmp_path / "a.jsonl").read_text(), timeout=120)
    control_file.write_text('{"command":"stop_after_step"}\n')
    assert proc.wait(timeout=120) == EXIT_STOPPED
    first = read_events(tmp_path / "a.jsonl")
    stopped_at = max(e["step"] for e in first if e["type"] == "metric")
    assert first[-1]["state"] == "stopped" and stopped_at < steps
    last_seq = first[-1]["seq"]
    cmd = [sys.executable, "-m", "troupe", "run", str(spec_path), "--events", str(tmp_path / "b.jsonl"), "--resume", "latest", "--seq-start", str(last_seq + 1)]
    assert subprocess.run(cmd, env=env, stderr=subprocess.DEVNULL, timeout=180).returncode == 0
    second = read_events(tmp_path / "b.jsonl")
    assert second[0]["seq"] == last_seq + 1 and second[-1]["state"] == "succeeded"
    assert sorted({e["step"] for e in second if e["type"] == "metric"}) == list(range(stopped_at + 1, steps + 1))


def test_resume_from_a_missing_checkpoint_fails_clearly(tmp_path: Path):
    result = run_spec(small_spec(steps=2), work_dir=tmp_path, resume="latest")
    assert result.state == "failed" and "no checkpoint in" in result.message


def _wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
