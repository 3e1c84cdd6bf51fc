"""The redesign's net (issue #26): short fixed-seed CPU runs give the very event stream they gave before.

Each case runs a few steps on a tiny preset and compares its whole event stream (metrics, episodes, logs,
checkpoints, statuses) with `fixtures/golden_events.json`, recorded from the runtime as it was before the
restructuring (main at c94e85f). Floats are compared exactly: JSON keeps every bit of a double. Only what
the wall clock decides is left out: timestamps, durations, rates, process ids, and the run folder's path.

Bits depend on the CPU's vector kernels: the same code gives floats a last bit apart on an AVX2 and an AVX512 host
(measured: grad_norm 3.6140942573 against 3.6140944958). So the file records the machine it was recorded on
(torch's CPU capability and version). On that kind of machine every float must be equal to the bit; on another kind
floats must agree to 1e-5 relative or 1e-5 absolute, and everything else (texts, token counts, names, the order of
events) exactly. Why 1e-5 absolute: some metrics are differences of float32 numbers of size 1-10 (logprob_gap, the
trainer's against the sampler's log-prob, is ~1e-7, pure rounding; DPO's margin), which inherit the operands'
rounding (float32's eps 1.2e-7 times magnitudes up to ~10, summed over a few terms), not a relative error. A change of
behaviour (another token, reward, advantage or update) moves values by far more, and changes texts. The
test's output says which comparison ran.

Re-record (only when a change of behaviour is intended, or on a new kind of machine, and say so in the commit):
    TROUPE_GOLDEN_RECORD=1 python -m pytest tests/test_golden_event_stream.py
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any, Callable

import pytest
from collab_helpers import secret_digit_spec
from runtime_helpers import FIXTURES, small_spec

from troupe import EventWriter, run_spec

GOLDEN = FIXTURES / "golden_events.json"
RECORD = os.environ.get("TROUPE_GOLDEN_RECORD") == "1"

# Keys whose values the wall clock decides (metric names and event fields).
_CLOCK_KEY = re.compile(r"(^ts$|^seconds$|^pid$|time|_s$|_ms$|per_s|/s$|duration|elapsed)")
# Numbers with a unit of time inside free text (log lines that say how long something took).
_CLOCK_TEXT = re.compile(r"\d+(\.\d+)?\s?(ms|s|seconds?|min)\b")
_PID_TEXT = re.compile(r"pid \d+")


def _scrub(value: Any, folder: str) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v, folder) for k, v in value.items() if not _CLOCK_KEY.search(k)}
    if isinstance(value, list):
        return [_scrub(v, folder) for v in value]
    if isinstance(value, str):
        return _PID_TEXT.sub("pid <n>", _CLOCK_TEXT.sub("<t>", value.replace(folder, "<run>")))
    return value


def _stream(events: list[dict], folder: Path) -> list[dict]:
    """The run's events without what the clock decides; memory events (host RSS) are left out too."""
    return [_scrub(e, str(folder)) for e in events if e["type"] != "memory"]


def _run(spec: dict, folder: Path, **kwargs: Any) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=folder, **kwargs)
    assert result.state == "succeeded", result.message
    return result.events or []


def _varied(spec: dict) -> dict:
    """A reward that varies within a group and a KL term: real updates, non-zero advantages."""
    spec["rewards"][0] = {"name": "letter_match", "source": {"kind": "builtin", "name": "letter_match"}}
    spec["actors"][0]["training"]["klBeta"] = 0.05
    return spec


def demo_grpo(folder: Path) -> list[dict]:
    return _stream(_run(_varied(small_spec(steps=3)), folder), folder)


def collaborative(folder: Path) -> list[dict]:
    spec = secret_digit_spec(folder, steps=3, shaped=True)
    spec["trainer"]["promptsPerStep"] = 2
    spec["algorithm"]["groupSize"] = 4
    return _stream(_run(spec, folder), folder)


def ppo(folder: Path) -> list[dict]:
    spec = _varied(small_spec(steps=3))
    spec["algorithm"].update({"name": "ppo", "lambda": 1.0})
    return _stream(_run(spec, folder), folder)


def mappo(folder: Path) -> list[dict]:
    spec = secret_digit_spec(folder, steps=3, shaped=True)
    spec["trainer"]["promptsPerStep"] = 2
    spec["algorithm"].update({"name": "mappo", "groupSize": 4, "entropyCoef": 0.05})
    return _stream(_run(spec, folder), folder)


def sft(folder: Path) -> list[dict]:
    spec = small_spec(steps=2, evalEvery=1, promptsPerStep=8)
    spec["algorithm"]["name"] = "sft"
    spec["datasets"][0] = {"name": "words", "source": {"kind": "builtin", "name": "reverse_word", "size": 64}, "evalFraction": 0.25}
    spec["rewards"] = []
    spec["environments"][0].update({"dataset": "words", "rewards": [], "completionField": "answer"})
    return _stream(_run(spec, folder), folder)


def dpo(folder: Path) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    letters = "abcdefgh"
    rows = [{"prompt": f"say {letters[i % 8]}:", "good": letters[i % 8] * 3, "bad": letters[(i * 3 + 1) % 8] * 3} for i in range(48)]
    (folder / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = small_spec(steps=2, evalEvery=1, promptsPerStep=8)
    spec["algorithm"].update({"name": "dpo", "beta": 0.1, "dpoLoss": "sigmoid"})
    spec["datasets"][0] = {"name": "pairs", "source": {"kind": "file", "path": "pairs.jsonl", "format": "jsonl"}, "evalFraction": 0.25}
    spec["rewards"] = []
    spec["environments"][0].update({"dataset": "pairs", "rewards": [], "chosenField": "good", "rejectedField": "bad"})
    return _stream(_run(spec, folder), folder)


def async_k1(folder: Path) -> list[dict]:
    spec = _varied(small_spec(steps=3))
    spec["algorithm"]["async"] = {"maxStaleness": 1}
    return _stream(_run(spec, folder), folder)


def resumed(folder: Path) -> list[dict]:
    """4 steps with a checkpoint at 2; a second run in another folder resumes from it and does steps 3-4."""
    spec = _varied(small_spec(steps=4, checkpointEvery=2))
    _run(copy.deepcopy(spec), folder / "first")
    second = folder / "second"
    return _stream(_run(spec, second, resume=folder / "first" / "checkpoints" / "step-2"), folder)


def dapo_dynamic(folder: Path) -> list[dict]:
    spec = _varied(small_spec(steps=3))
    spec["algorithm"].update({"name": "dapo", "dynamicSampling": {"enabled": True, "maxRounds": 2}})
    return _stream(_run(spec, folder), folder)


def async_thread(folder: Path) -> list[dict]:
    """K = 1 with the producer in a thread (the process producer refused), as the async tests force it."""
    import troupe.train as train_module

    spec = _varied(small_spec(steps=3))
    spec["algorithm"]["async"] = {"maxStaleness": 1}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(train_module, "process_producer_ok", lambda *a: "forced by the test")
        return _stream(_run(spec, folder), folder)


def lora(folder: Path) -> list[dict]:
    spec = _varied(small_spec(steps=3))
    spec["actors"][0]["training"]["lora"] = {"rank": 4, "alpha": 8, "dropout": 0.0, "targetModules": ["q_proj", "v_proj"]}
    return _stream(_run(spec, folder), folder)


def game(folder: Path) -> list[dict]:
    from test_game_learning import GAME, game_spec

    return _stream(_run(game_spec(2, GAME), folder), folder)


def python_env(folder: Path) -> list[dict]:
    from test_acting import relay_spec

    folder.mkdir(parents=True, exist_ok=True)
    return _stream(_run(relay_spec(folder), folder), folder)


CASES: dict[str, Callable[[Path], list[dict]]] = {
    f.__name__: f for f in (demo_grpo, collaborative, ppo, mappo, sft, dpo, async_k1, resumed, dapo_dynamic, async_thread, lora, game, python_env)
}


MACHINE_KEY = "_recorded_on"
FLOAT_RTOL = 1e-5
FLOAT_ATOL = 1e-5


def _machine() -> dict[str, str]:
    """What decides the last bits: torch's version, the kernels it picks, and the CPU itself. Two AVX512 hosts of
    different models (an Emerald Rapids here, another Xeon before) gave floats a few ulps apart with the same torch:
    oneDNN picks AMX or other kernels by model, so the model is part of the key."""
    import torch

    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "cpu_model": _cpu_model(), "torch": torch.__version__}


def _cpu_model() -> str:
    """Vendor, family and model number from /proc/cpuinfo (a VM's "model name" is often a generic "Xeon")."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return "unknown"
    return f'{fields.get("vendor_id", "?")} family {fields.get("cpu family", "?")} model {fields.get("model", "?")}'


def _golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


def _close(mine: Any, theirs: Any, where: str) -> None:
    """Equal, floats to FLOAT_RTOL relative; names the first path that differs."""
    if isinstance(theirs, float) or isinstance(mine, float):
        assert isinstance(mine, (int, float)) and isinstance(theirs, (int, float)), (where, mine, theirs)
        assert mine == pytest.approx(theirs, rel=FLOAT_RTOL, abs=FLOAT_ATOL), (where, mine, theirs)
    elif isinstance(theirs, dict):
        assert isinstance(mine, dict) and mine.keys() == theirs.keys(), (where, sorted(mine), sorted(theirs))
        for k in theirs:
            _close(mine[k], theirs[k], f"{where}.{k}")
    elif isinstance(theirs, list):
        assert isinstance(mine, list) and len(mine) == len(theirs), (where, mine, theirs)
        for i, (a, b) in enumerate(zip(mine, theirs)):
            _close(a, b, f"{where}[{i}]")
    else:
        assert mine == theirs, (where, mine, theirs)


@pytest.mark.parametrize("case", list(CASES))
def test_the_event_stream_is_the_recorded_one(tmp_path: Path, case: str):
    got = json.loads(json.dumps(CASES[case](tmp_path)))  # the JSON the events are written as
    assert any(e["type"] == "metric" for e in got) and got[-1]["type"] == "status"
    if RECORD:
        golden = _golden()
        golden[case] = got
        golden[MACHINE_KEY] = _machine()
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
        return
    golden = _golden()
    want = golden[case]
    bitwise = golden.get(MACHINE_KEY) == _machine()
    print(f"{case}: {'bitwise' if bitwise else f'floats to {FLOAT_RTOL} relative'} (recorded on {golden.get(MACHINE_KEY)}, here {_machine()})")
    assert len(got) == len(want), ([e["type"] for e in got], [e["type"] for e in want])
    for k, (mine, theirs) in enumerate(zip(got, want)):  # event by event, so a failure names the first that differs
        if bitwise:
            assert mine == theirs
        else:
            _close(mine, theirs, f"event {k}")
