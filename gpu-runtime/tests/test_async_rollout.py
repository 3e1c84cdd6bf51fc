"""Asynchronous rollouts (algorithm.async.maxStaleness: K, async_rollout.py): K = 0 is the synchronous loop bit
for bit, staleness never exceeds K, checkpoints carry the batches in flight so resume is exact (also after a
stop at the step boundary), and K = 1 learns the demo."""

import copy
import json
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import TEST_THREADS, demo_input, small_spec

from troupe.checkpointing import list_checkpoints
from troupe.control import RunControl
from troupe.events import EventWriter
from troupe.run import run_spec

TIMING = {"step_time_s", "tokens_per_s"}  # and every time/<phase>_s (phase_clock.py)
STALENESS = {"staleness/mean", "staleness/max"}
VARIED = {"name": "letter_match", "source": {"kind": "python", "code": "def reward(prompt, completion, **row):\n    return len(set(completion)) / 8"}}


def wd(path: Path) -> Path:
    """A run folder (python rewards bind it into their sandbox, so it must exist)."""
    path.mkdir(parents=True, exist_ok=True)
    return path


def per_step(events, drop=frozenset()):
    return {(e["step"], e.get("actor")): {k: v for k, v in e["values"].items() if k not in TIMING | drop and not k.startswith("time/")} for e in events if e["type"] == "metric"}


def episodes(events):
    return [(e["step"], e["group"], e["sample"], json.dumps(e["messages"]), e["reward"]) for e in events if e["type"] == "episode"]


def spec(steps=4, k=None, **trainer):
    s = small_spec(steps=steps, **trainer)
    s["rewards"][0] = copy.deepcopy(VARIED)  # varies within groups: real updates, non-zero advantages
    s["actors"][0]["training"]["klBeta"] = 0.05
    if k is not None:
        s["algorithm"]["async"] = {"maxStaleness": k}
    return s


# A run's time here is mostly its producer process's start (spawn re-imports torch and transformers): tests that
# only read a run of the same spec share one, each keeping its own assertions. Tests that change a run (monkeypatch,
# stop, pause, kill) run their own.
@pytest.fixture(scope="module")
def k1_four_steps(tmp_path_factory) -> tuple[Any, "_SegmentsAt"]:
    """spec(steps=4, k=1), with this process's weight slots noted while step 2 reports."""
    events = _SegmentsAt(2)
    return run_spec(spec(steps=4, k=1), events=events, work_dir=wd(tmp_path_factory.mktemp("k1-four-steps"))), events


@pytest.fixture(scope="module")
def k1_five_steps(tmp_path_factory) -> Any:
    """spec(steps=5, k=1)."""
    return run_spec(spec(steps=5, k=1), work_dir=wd(tmp_path_factory.mktemp("k1-five-steps")))


@pytest.mark.parametrize("variant", ["plain", "dynamic+tis+eval+checkpoints"])
def test_k0_is_the_synchronous_loop_bit_for_bit(tmp_path: Path, variant: str):
    def make(k):
        s = spec(steps=4, k=k)
        if variant != "plain":
            s["algorithm"]["dynamicSampling"] = {"enabled": True, "maxRounds": 2}
            s["algorithm"]["importanceCorrection"] = {"kind": "tis", "cap": 2}
            s["datasets"][0]["evalFraction"] = 0.25
            s["trainer"].update(evalEvery=2, checkpointEvery=2)
        return s

    sync = run_spec(make(None), work_dir=wd(tmp_path / "sync"))
    k0 = run_spec(make(0), work_dir=wd(tmp_path / "k0"))
    assert sync.state == k0.state == "succeeded", (sync.message, k0.message)
    assert all(v == 0.0 for v in k0.metrics("staleness/max") + k0.metrics("staleness/mean")) and len(k0.metrics("staleness/max")) == 4
    want, got = per_step(sync.events), per_step(k0.events, drop=STALENESS)
    assert sorted(got) == sorted(want) and len(want) >= 4
    for key in want:  # no tolerance: the same floats
        assert got[key] == want[key], (key, got[key], want[key])
    assert episodes(k0.events) == episodes(sync.events)
    if variant != "plain":  # the correction is reported (sampler and trainer agree here: weights ~1, none capped)
        assert k0.metrics("tis/weight_mean") == sync.metrics("tis/weight_mean") and len(k0.metrics("tis/weight_mean")) == 4
        assert all(abs(w - 1) < 1e-4 for w in k0.metrics("tis/weight_mean")) and max(k0.metrics("tis/clipped_frac")) == 0.0


@pytest.mark.parametrize("k", [1, 2])
def test_staleness_never_exceeds_k(tmp_path: Path, k: int, request: pytest.FixtureRequest):
    run = request.getfixturevalue("k1_five_steps") if k == 1 else run_spec(spec(steps=5, k=k), work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    lags = run.metrics("staleness/max")
    assert lags == run.metrics("staleness/mean")  # one weights version per batch
    assert len(lags) == 5 and max(lags) <= k
    # The batch of step t is sampled after exactly max(0, t - 1 - k) updates: the lag grows to k and stays.
    assert lags == [float(min(t - 1, k)) for t in range(1, 6)]


def test_an_async_run_is_the_same_run_each_time(tmp_path: Path, k1_four_steps):
    a, _ = k1_four_steps
    b = run_spec(spec(steps=4, k=1), work_dir=wd(tmp_path / "b"))
    assert a.state == b.state == "succeeded", (a.message, b.message)
    assert per_step(a.events) == per_step(b.events) and episodes(a.events) == episodes(b.events)


class _StopAfterStep:
    """A SIGTERM during step n: the loop is cancelled at the next boundary (no checkpoint then)."""

    def __init__(self, events: EventWriter, n: int):
        self.events, self.n, self.reason = events, n, "test"

    def is_set(self) -> bool:
        return any(e["type"] == "metric" and e["step"] >= self.n for e in self.events.events)


def test_resume_from_a_checkpoint_with_a_batch_in_flight_is_exact(tmp_path: Path):
    straight = run_spec(spec(steps=4, k=1, checkpointEvery=2), work_dir=wd(tmp_path / "straight"))
    assert straight.state == "succeeded", straight.message
    assert (tmp_path / "straight" / "checkpoints" / "step-2" / "in_flight.pt").exists()

    kept = EventWriter(keep=True)
    first = run_spec(spec(steps=4, k=1, checkpointEvery=2), events=kept, work_dir=wd(tmp_path / "resumed"), stop=_StopAfterStep(kept, 2))
    assert first.state == "cancelled" and first.steps_completed == 2, first.message
    second = run_spec(spec(steps=4, k=1, checkpointEvery=2), work_dir=wd(tmp_path / "resumed"), resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{key: v for key, v in per_step(first.events).items() if key[0] <= 2}, **per_step(second.events)}
    assert got == want and len(want) == 4
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]


class _StopAt(EventWriter):
    """Asks the run to stop after step n, as the control channel would, while step n reports."""

    def __init__(self, control: RunControl, n: int):
        super().__init__(keep=True)
        self.control, self.n = control, n

    def metric(self, step, values, actor=None):
        out = super().metric(step, values, actor)
        if step == self.n:
            self.control.apply("stop_after_step")
        return out


def test_stop_after_step_saves_what_is_in_flight_and_resume_is_exact(tmp_path: Path, k1_five_steps):
    k = 1
    straight = k1_five_steps
    assert straight.state == "succeeded", straight.message

    control = RunControl()
    first = run_spec(spec(steps=5, k=k), events=_StopAt(control, 2), work_dir=wd(tmp_path / "resumed"), control=control)
    assert first.state == "stopped" and first.steps_completed == 2, first.message
    assert [s for s, _ in list_checkpoints(tmp_path / "resumed" / "checkpoints")] == [2]
    import torch

    saved = torch.load(tmp_path / "resumed" / "checkpoints" / "step-2" / "in_flight.pt", weights_only=False)
    # At the boundary after step 2 the producer may have made the batches of steps 3 and 4 (K + 1): both saved.
    assert [b["step"] for b in saved["batches"]] == [3, 4] and [b["version"] for b in saved["batches"]] == [1, 2]
    second = run_spec(spec(steps=5, k=k), work_dir=wd(tmp_path / "resumed"), resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{key: v for key, v in per_step(first.events).items() if key[0] <= 2}, **per_step(second.events)}
    assert got == want and len(want) == 5
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]


# --- learning: the demo with K = 1 ---------------------------------------------------------------
# Same task, seed and bars as tests/test_learning.py (see its docstring for where the margins come from):
# a rise of +0.15 from the first 20 steps to the last 20, and a last-20 mean of at least twice the best
# prompt-blind policy (1/8).
MIN_RISE = 0.15
PROMPT_BLIND_BEST = 1 / 8


@pytest.mark.slow
def test_demo_learns_with_k1(tmp_path: Path):
    s = demo_input()
    s["trainer"]["cpuThreads"] = TEST_THREADS
    s["algorithm"]["async"] = {"maxStaleness": 1}
    started = time.monotonic()
    result = run_spec(s, events=EventWriter(keep=True), work_dir=wd(tmp_path))
    assert result.state == "succeeded", result.message
    rewards = result.metrics("reward/mean")
    assert len(rewards) == s["trainer"]["steps"]
    head, tail = sum(rewards[:20]) / 20, sum(rewards[-20:]) / 20
    print(f"demo K=1: {time.monotonic() - started:.1f}s, reward first 20 steps {head:.3f}, last 20 steps {tail:.3f}")
    assert max(result.metrics("staleness/max")) == 1.0
    assert tail - head >= MIN_RISE, (head, tail)
    assert tail >= 2 * PROMPT_BLIND_BEST, tail


def test_tis_weights_the_stale_samples(tmp_path: Path):
    """With K = 1 and TIS the weights of step 1 are ~1 (the sampler is the trainer), then they move: the
    trainer's log-probs are one update newer than the sampler's."""
    s = spec(steps=4, k=1)
    s["algorithm"]["importanceCorrection"] = {"kind": "tis", "cap": 2}
    run = run_spec(s, work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    weights = run.metrics("tis/weight_mean")
    assert abs(weights[0] - 1) < 1e-5, weights
    assert all(abs(w - 1) > 1e-4 for w in weights[1:]), weights


def test_the_producer_thread_ends_when_the_loop_raises(tmp_path: Path, monkeypatch):
    import threading

    import troupe.algorithms.on_policy as learner_module  # the update runs inside the learner (issue #26)

    def broken(*args, **kwargs):
        raise RuntimeError("update failed on purpose")

    monkeypatch.setattr(learner_module, "update_actor", broken)
    run = run_spec(spec(steps=4, k=1), work_dir=wd(tmp_path))
    assert run.state == "failed" and "on purpose" in run.message, run.message
    assert not any(t.name == "troupe-rollout-producer" for t in threading.enumerate())
    assert multiprocessing.active_children() == []
    assert _weight_segments(os.getpid()) == []


# --- the producer process (async_process.py: K >= 1 on a CPU host) --------------------------------------


def _weight_segments(pid: int) -> list[str]:
    """The producer weight slots a trainer process `pid` has in /dev/shm (async_process.SEGMENT_PREFIX)."""
    return sorted(n for n in os.listdir("/dev/shm") if n.startswith(f"troupe-weights-{pid}-"))


class _SegmentsAt(EventWriter):
    """Notes this process's weight slots while step n reports."""

    def __init__(self, n: int):
        super().__init__(keep=True)
        self.n = n
        self.seen: list[str] = []

    def metric(self, step, values, actor=None):
        if step == self.n:
            self.seen = _weight_segments(os.getpid())
        return super().metric(step, values, actor)


@pytest.mark.parametrize("k", [1, 2])
def test_k_on_cpu_samples_in_a_producer_process_that_ends_with_the_run(tmp_path: Path, k: int, request: pytest.FixtureRequest):
    if k == 1:
        run, events = request.getfixturevalue("k1_four_steps")
    else:
        events = _SegmentsAt(2)
        run = run_spec(spec(steps=4, k=k), events=events, work_dir=wd(tmp_path))
    assert run.state == "succeeded", run.message
    logs = [e["message"] for e in run.events if e["type"] == "log"]
    assert any("asynchronous rollouts: a producer process (pid" in m for m in logs), logs
    assert multiprocessing.active_children() == []
    # The weights went through K + 1 shared-memory slots, unlinked when the run ended.
    assert len(events.seen) == k + 1, events.seen
    assert _weight_segments(os.getpid()) == []


def test_weight_slots_hand_over_the_trained_parameters_bit_for_bit():
    """The table holds what an update changes (a frozen parameter, as a LoRA actor's base, is not handed over), at
    aligned offsets that do not overlap; what one side writes into a slot, the other side reads back exactly."""
    import torch

    from troupe.rollout.async_process import ALIGN, WeightSlots

    torch.manual_seed(0)
    trainer = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Linear(5, 7).to(torch.bfloat16))
    trainer[0].bias.requires_grad_(False)
    sampler = copy.deepcopy(trainer)
    with torch.no_grad():
        for param in sampler.parameters():
            param.zero_()
    slots = WeightSlots.create({"student": trainer}, 2)
    names = slots.names
    try:
        assert [e.name for e in slots.table] == ["0.weight", "1.weight", "1.bias"]
        ends = [e.offset + e.numel * e.dtype.itemsize for e in slots.table]
        assert all(e.offset % ALIGN == 0 for e in slots.table) and all(end <= e.offset for end, e in zip(ends, slots.table[1:]))
        slots.write(0, {"student": trainer})
        with torch.no_grad():
            trainer[0].weight.mul_(3)  # the next version, in the other slot: slot 0 keeps the first
        slots.write(1, {"student": trainer})
        producer = WeightSlots.attach(slots.table, names)  # as the producer process does, by name
        try:
            producer.read(1, {"student": sampler})
        finally:
            producer.close(unlink=False)
        for (name, want), got in zip(trainer.named_parameters(), sampler.parameters()):
            if want.requires_grad:
                assert got.dtype == want.dtype and torch.equal(got.view(torch.uint8), want.detach().view(torch.uint8)), name
            else:
                assert not got.any(), name
    finally:
        slots.close(unlink=True)
    assert names and not any(Path("/dev/shm", n).exists() for n in names)


def test_the_producer_process_makes_the_same_run_as_the_thread(tmp_path: Path, monkeypatch):
    """Same schedule, same RNG stream (the trainer's at the start), same data position: the same floats. What the
    process changes is only where the sampling runs."""
    import troupe.train as train_module

    s = spec(steps=5, k=1)
    s["algorithm"]["dynamicSampling"] = {"enabled": True, "maxRounds": 2}
    in_process = run_spec(copy.deepcopy(s), events=EventWriter(keep=True), work_dir=wd(tmp_path / "process"))
    monkeypatch.setattr(train_module, "process_producer_ok", lambda *a: "forced by the test")
    threaded = run_spec(copy.deepcopy(s), events=EventWriter(keep=True), work_dir=wd(tmp_path / "thread"))
    assert in_process.state == threaded.state == "succeeded", (in_process.message, threaded.message)
    assert any("producer thread (forced by the test)" in e.get("message", "") for e in threaded.events)
    want, got = per_step(threaded.events), per_step(in_process.events)
    assert sorted(got) == sorted(want) and len(want) == 5
    for key in want:
        assert got[key] == want[key], (key, got[key], want[key])
    assert episodes(in_process.events) == episodes(threaded.events)


class _KillProducerAt(EventWriter):
    def __init__(self, n: int):
        super().__init__(keep=True)
        self.n = n

    def metric(self, step, values, actor=None):
        out = super().metric(step, values, actor)
        if step == self.n:
            for child in multiprocessing.active_children():
                if child.name == "troupe-rollout-producer":
                    child.kill()
                    child.join()
        return out


def test_a_producer_process_that_dies_fails_the_run_with_a_clear_message(tmp_path: Path):
    run = run_spec(spec(steps=6, k=1), events=_KillProducerAt(1), work_dir=wd(tmp_path))
    assert run.state == "failed", run.message
    assert "rollout producer process exited" in run.message, run.message
    assert multiprocessing.active_children() == []
    assert _weight_segments(os.getpid()) == []  # a failed run unlinks its weight slots too


class _PauseAt(EventWriter):
    """Pauses the run while step n reports (as the control channel would) and resumes it a second later."""

    def __init__(self, control: RunControl, n: int):
        super().__init__(keep=True)
        self.control, self.n = control, n

    def metric(self, step, values, actor=None):
        out = super().metric(step, values, actor)
        if step == self.n:
            import threading

            self.control.apply("pause")
            threading.Timer(1.0, self.control.apply, args=("resume",)).start()
        return out


def test_a_pause_waits_at_the_trainers_step_boundary_and_changes_nothing(tmp_path: Path, k1_four_steps):
    straight, _ = k1_four_steps
    assert straight.state == "succeeded", straight.message
    control = RunControl()
    paused = run_spec(spec(steps=4, k=1), events=_PauseAt(control, 2), work_dir=wd(tmp_path / "paused"), control=control)
    assert paused.state == "succeeded", paused.message
    statuses = [(e["state"], e.get("message", "")) for e in paused.events if e["type"] == "status"]
    assert ("paused", "paused after step 2 of 4") in statuses
    assert per_step(paused.events) == per_step(straight.events)


def _resource_trackers_of(pid: int) -> list[int]:
    """The multiprocessing resource tracker(s) process `pid` started (they unlink what it registered once every
    process sharing them has exited)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
            continue
        if ppid == pid and b"resource_tracker" in command:
            found.append(int(entry))
    return found


def _gone(pid: int) -> bool:
    """Exited (a zombie left for an init that does not reap counts as exited)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.startswith("State:") and "Z" in line for line in status)
    except FileNotFoundError:
        return True


@pytest.mark.slow
def test_the_producer_process_exits_when_the_trainer_is_killed(tmp_path: Path):
    """kill -9 of the trainer (an OOM kill, a runner's process-group kill missing it): the producer must not live on.
    It did once: its unread batches filled the pipe and exiting waited for them to be written."""
    import os
    import re
    import signal
    import subprocess
    import sys

    s = demo_input()
    # 32 prompts x 8 samples: a batch the trainer never reads is more than the pipe holds (64 KiB).
    s["trainer"].update(steps=500, cpuThreads=TEST_THREADS, promptsPerStep=32)
    s["algorithm"]["async"] = {"maxStaleness": 1}
    (tmp_path / "spec.json").write_text(json.dumps(s))
    stderr = (tmp_path / "stderr.txt").open("w")  # a file, not a pipe nobody reads while the run goes on
    trainer = subprocess.Popen([sys.executable, "-m", "troupe", "run", "spec.json", "--work-dir", str(tmp_path)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=stderr, text=True)
    assert trainer.stdout is not None
    producer, steps = None, 0
    for line in trainer.stdout:
        found = re.search(r"a producer process \(pid (\d+)\)", line)
        producer = int(found.group(1)) if found else producer
        steps += '"type":"metric"' in line
        if producer is not None and steps >= 3:  # running, batches in flight
            break
    assert producer is not None and not _gone(producer)
    assert len(_weight_segments(trainer.pid)) == 2  # K + 1 weight slots
    trackers = _resource_trackers_of(trainer.pid)
    time.sleep(2)  # the producer makes the next batch, which nobody will read
    trainer.send_signal(signal.SIGKILL)
    trainer.wait()
    deadline = time.monotonic() + 15
    while not _gone(producer) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = not _gone(producer)
    if alive:
        os.kill(producer, signal.SIGKILL)
    assert not alive, "the producer process outlived its trainer by 15 s"
    # The trainer never unlinked its weight slots: the producer did on its way out (the resource tracker, which
    # exits with the last process sharing it, would have too, but warning of a leak).
    assert _weight_segments(trainer.pid) == []
    while any(not _gone(t) for t in trackers) and time.monotonic() < deadline + 10:
        time.sleep(0.2)
    stderr.close()
    assert trackers and all(_gone(t) for t in trackers)  # it has said all it will (the killed queues' semaphores)
    assert "leaked shared_memory" not in (tmp_path / "stderr.txt").read_text()


@pytest.mark.slow
def test_a_run_in_its_own_process_unlinks_its_weight_slots_without_a_leak_warning(tmp_path: Path):
    """The producer attaches to the slots by name, which registers them with the resource tracker it shares with the
    trainer (Python 3.11): the trainer alone unlinks them, after the producer has exited. The tracker reports any
    name still registered when the last of them exits, on the stderr captured here."""
    import subprocess
    import sys

    (tmp_path / "spec.json").write_text(json.dumps(spec(steps=3, k=1)))
    done = subprocess.Popen([sys.executable, "-m", "troupe", "run", "spec.json", "--work-dir", str(tmp_path)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = done.communicate(timeout=300)  # until the tracker too has exited: it holds the stderr pipe
    assert done.returncode == 0, err
    assert "a producer process (pid" in out + err
    assert "leaked" not in err and "shared_memory" not in err, err
    assert _weight_segments(done.pid) == []


UNGUARDED_SCRIPT = """import json
import sys

from troupe.run import run_spec

# At module level, with no `if __name__ == "__main__":` guard: the spawned producer re-runs this script.
result = run_spec(json.load(open("spec.json")), work_dir=".")
print("RESULT " + json.dumps([result.state, result.message]), flush=True)
sys.exit(result.exit_code)
"""


@pytest.mark.slow
def test_a_script_without_a_main_guard_fails_with_a_hint_instead_of_hanging(tmp_path: Path):
    """spawn re-imports the main script in the producer, which runs the script's run_spec there and exits
    before it reads its setup. The trainer once wrote that setup (the actors' modules, more than a pipe holds)
    while starting the process and waited forever for a reader that was gone."""
    import os
    import subprocess
    import sys

    (tmp_path / "spec.json").write_text(json.dumps(spec(steps=3, k=1)))
    (tmp_path / "train.py").write_text(UNGUARDED_SCRIPT)
    try:
        done = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, env=os.environ, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else e.stderr
        pytest.fail(f"the trainer hung starting its producer process; stderr:\n{stderr}")
    results = [json.loads(line[len("RESULT ") :]) for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    # The producer's own run_spec fails too (starting a process while bootstrapping); the trainer's is the one
    # that speaks of its producer.
    trainer = [message for state, message in results if "rollout producer process" in message]
    assert len(trainer) == 1 and done.returncode != 0, (done.stdout, done.stderr)
    assert "exited" in trainer[0] and 'if __name__ == "__main__":' in trainer[0] and "train.py" in trainer[0], trainer[0]
