"""The runtime as the runner drives it: a subprocess, events on a file or fd, signals, exit codes."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runtime_helpers import check_protocol, read_events, small_spec

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _write_spec(tmp_path: Path, spec: dict) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def _troupe(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "troupe", *args], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_finishes_the_step_then_cancels(tmp_path: Path, events_validator, signum):
    spec_path = _write_spec(tmp_path, small_spec(steps=100_000))
    events_path = tmp_path / "events.jsonl"
    proc = _troupe("run", str(spec_path), "--events", str(events_path), "--seq-start", "3")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if events_path.exists() and '"type":"metric"' in events_path.read_text():
            break
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 3, stderr
    events = read_events(events_path)
    check_protocol(events, events_validator, seq_start=3)
    last = events[-1]
    name = signal.Signals(signum).name
    assert last["state"] == "cancelled" and name in last["message"]
    steps = [e["step"] for e in events if e["type"] == "metric"]
    assert steps == list(range(1, len(steps) + 1)) and steps  # every started step finished and reported
    assert f"after step {steps[-1]} of 100000" in last["message"]
    assert f"{name} received" in stderr


def test_a_crash_is_error_then_failed_and_exit_1(tmp_path: Path, events_validator):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{ this is not json")
    spec = small_spec()
    spec["actors"][0]["model"] = {"source": "local", "path": "broken-model"}
    events_path = tmp_path / "events.jsonl"
    proc = _troupe("run", str(_write_spec(tmp_path, spec)), "--events", str(events_path))
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    events = read_events(events_path)
    check_protocol(events, events_validator)
    error = next(e for e in events if e["type"] == "error")
    assert error["traceback"].startswith("Traceback") and "field" not in error
    assert events[-1]["state"] == "failed"


def test_invalid_spec_exit_2_on_an_inherited_fd(tmp_path: Path, events_validator):
    spec = small_spec()
    spec["environments"][0]["kind"] = "collaborative"
    spec["environments"][0]["roundSpec"] = "student -> Bob"
    read_fd, write_fd = os.pipe()
    proc = _troupe("run", str(_write_spec(tmp_path, spec)), "--events-fd", str(write_fd), "--seq-start", "12", pass_fds=(write_fd,))
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        lines = pipe.read().splitlines()
    proc.communicate(timeout=60)
    assert proc.returncode == 2
    events = [json.loads(x) for x in lines]
    check_protocol(events, events_validator, seq_start=12)
    assert events[0]["field"] == "environments.0.roundSpec"
    assert 'line 1, column 12: unknown actor "Bob"' in events[0]["message"]


def test_validate_command(tmp_path: Path):
    good = _troupe("validate", str(_write_spec(tmp_path, small_spec())))
    out, _ = good.communicate(timeout=60)
    assert good.returncode == 0 and json.loads(out)["actors"][0]["training"]["clipEpsHigh"] == 0.2
    spec = small_spec()
    spec["trainer"]["steps"] = -1  # 0 is an eval-only run now; below 0 is never valid
    bad = _troupe("validate", str(_write_spec(tmp_path, spec)))
    _, err = bad.communicate(timeout=60)
    assert bad.returncode == 2 and err.startswith("trainer.steps:")
