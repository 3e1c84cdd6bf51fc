"""Python rewards that try to escape or flood: each is contained, scored as the failure score,
logged, and the next call (and the run) goes on. Real bubblewrap, no mocks."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from runtime_helpers import small_spec
from sandbox_helpers import listener, marker, processes_with, reachable, run_folders, wait_until_gone

from troupe import EventWriter, run_spec
from troupe.rewards.python_rewards import SCORE_LIMIT, PythonReward, checked_result, ProtocolError
from troupe.sandbox import sandbox_status

pytestmark = pytest.mark.skipif(not sandbox_status().usable or sandbox_status().mode != "bwrap",
                                reason="needs bubblewrap (scripts/setup.sh installs it)")

FAIL = -7.0  # a failure score no honest call returns


def reward(body: str, timeout=2.0, memory_mb=128, run_dir=None):
    """A reward whose first call (completion "abuse") runs `body` and whose others return 1."""
    code = "import os, sys, time, socket, json\ndef reward(prompt, completion, **row):\n    if completion == 'abuse':\n" + \
        textwrap.indent(textwrap.dedent(body), "        ") + "\n    return 1.0\n"
    reports = []
    r = PythonReward("r", code, "reward", "completion", timeout, memory_mb, report=reports.append, failure_score=FAIL, run_dir=run_dir)
    return r, reports


def score(r, *completions):
    calls = [{"prompt": "p", "completion": c, "n": i} for i, c in enumerate(completions)]
    return r.score_many(calls, [{"n": i} for i in range(len(calls))])


def contained(body: str, expect: str, **kw):
    """Runs the abuse between two honest calls; returns the one report."""
    r, reports = reward(body, **kw)
    try:
        assert score(r, "ok", "abuse", "ok") == [1.0, FAIL, 1.0]
        assert score(r, "ok") == [1.0]  # and the reward keeps working afterwards
    finally:
        r.close()
    assert len(reports) == 1, reports
    assert expect in reports[0], reports[0]
    assert 'reward "r" failed on row {"n": 1}' in reports[0] and f"scored {FAIL:g}" in reports[0]
    return reports[0]


def test_reading_files_outside_fails():
    contained("return len(open('/etc/shadow').read())", "FileNotFoundError")
    contained("return len(open('/root/.bashrc').read())", "FileNotFoundError")
    contained("return len(os.listdir('/work/coord'))", "FileNotFoundError")


def test_another_runs_folder_is_unreachable_and_its_own_is_read_only():
    with run_folders() as (root, run_a, run_b):
        # positive control: its own run's file reads (and scores its length)
        r, reports = reward("return len(open('secret.txt').read())", run_dir=run_a)
        assert score(r, "abuse") == [len("secret of run-a")] and reports == []
        r.close()
        contained(f"return len(open('{run_b}/secret.txt').read())", "FileNotFoundError", run_dir=run_a)
        contained("open('written.txt', 'w').write('x')", "OSError: [Errno 30] Read-only file system", run_dir=run_a)
        contained(f"open('{run_b}/x', 'w').write('x')", "FileNotFoundError", run_dir=run_a)
        assert sorted(p.name for p in run_a.iterdir()) == ["secret.txt"] and sorted(p.name for p in run_b.iterdir()) == ["secret.txt"]


def test_writing_outside_fails():
    contained("open('/usr/evil', 'w').write('x')", "Read-only file system")
    contained("open('/evil', 'w').write('x')", "PermissionError")
    assert not os.path.exists("/usr/evil") and not os.path.exists("/evil")


@pytest.mark.parametrize("port", [6379, 5432, "listener"])
def test_network_connects_fail(port):
    with listener() as own:
        port = own if port == "listener" else port
        if port == own:
            assert reachable(port)  # positive control: the trainer's side reaches it
        # The sandbox's own network namespace has a loopback with nothing listening on it.
        contained(f"socket.create_connection(('127.0.0.1', {port}), timeout=2)", "ConnectionRefusedError")


def test_runner_environ_and_secrets_are_out_of_reach(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://secret")
    contained(f"return len(open('/proc/{os.getpid()}/environ').read())", "FileNotFoundError")
    contained(f"return len(open('/proc/{os.getppid()}/environ').read())", "FileNotFoundError")
    contained("return len(open('/proc/1/environ').read())", "PermissionError")
    contained("raise RuntimeError(os.environ.get('DATABASE_URL', 'no secret'))", "RuntimeError: no secret")


def test_200_forks_are_contained_and_none_outlives_the_call():
    tag = marker()
    report = contained(f"""
        for _ in range(200):
            if os.fork() == 0:
                os.setsid()
                os.execv('/usr/bin/sleep', ['sleep', '{tag}'])
        """, "BlockingIOError", timeout=20)  # time enough to reach the limit on a loaded machine
    assert "Resource temporarily unavailable" in report
    assert wait_until_gone(tag) == []


def test_1gb_allocation_fails_alone():
    contained("x = bytearray(1024 ** 3)", "MemoryError", memory_mb=256)


def test_an_infinite_loop_is_stopped_at_the_time_limit():
    contained("while True: pass", "exceeded its time limit", timeout=0.5)


def test_a_loop_that_blocks_the_alarm_is_killed_from_outside():
    report = contained("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True: pass", "ran past its time limit", timeout=0.5)
    assert "sandbox was killed" in report


def test_100mb_printed_in_a_call_is_cut_and_the_trainer_does_not_grow():
    # A fresh interpreter, so its peak memory says what the reward's output cost the trainer.
    program = textwrap.dedent("""
        import resource, sys
        from troupe.rewards.python_rewards import PythonReward
        reports = []
        code = ("import os\\ndef reward(prompt, completion, **row):\\n    if completion == 'print':\\n"
                "        for _ in range(100):\\n            print('x' * 1_000_000)\\n"
                "    if completion == 'write':\\n        for _ in range(100):\\n            os.write(2, b'x' * 1_000_000)\\n"
                "    return 1.0\\n")
        r = PythonReward("r", code, "reward", "completion", 20.0, 256, report=reports.append, failure_score=-7.0)
        calls = [{"prompt": "p", "completion": c} for c in ("print", "ok", "write", "ok")]
        print(r.score_many(calls, [{}] * 4), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        r.close()
        for line in reports:
            print(line.splitlines()[-1])
    """)
    baseline = subprocess.run([sys.executable, "-c", "import resource, troupe.rewards.python_rewards; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
                              capture_output=True, text=True, check=True)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    scores, peak_kb = lines[0].rsplit(" ", 1)
    assert scores == "[-7.0, 1.0, -7.0, 1.0]"
    assert "printed more than 1,000,000 bytes" in lines[1]  # print(): the worker's own cap
    assert "printed more than 2,000,000 bytes and was killed" in lines[2]  # raw fd writes: this side's cap
    assert int(peak_kb) - int(baseline.stdout) < 20_000, (peak_kb, baseline.stdout)  # < 20 MB for 200 MB printed


def test_returning_1e308_and_non_numbers_fail():
    contained("return 1e308", f"outside the accepted range [-{SCORE_LIMIT:g}, {SCORE_LIMIT:g}]")
    contained("return float('inf')", "not a finite number")
    contained("return 'garbage'", "not a number")
    contained("return True", "not a number")


def test_a_forged_nan_on_the_channel_is_refused_and_the_worker_replaced():
    # The answer channel is a pipe among the worker's fds: write a well-formed NaN answer on all of them.
    body = """
        line = json.dumps({"id": 1, "i": 1, "score": float("nan"), "seconds": 0}).encode() + b"\\n"
        for fd in range(3, 64):
            try:
                os.write(fd, line)
            except OSError:
                pass
        return 1.0
    """
    report = contained(body, "answered something that is not a result (NaN is not a number JSON allows)")
    assert "sandbox was killed" in report


def test_a_forged_out_of_range_score_is_refused():
    body = """
        for fd in range(3, 64):
            try:
                os.write(fd, b'{"id": 1, "i": 1, "score": 1e308, "seconds": 0}\\n')
            except OSError:
                pass
        return 1.0
    """
    report = contained(body, "not a result (a score of 1e+308, outside the accepted range")
    assert "sandbox was killed" in report


@pytest.mark.parametrize("line, problem", [
    (b'{"id": 1, "i": 0, "score": NaN}', "NaN"),
    (b'{"id": 1, "i": 0, "score": Infinity}', "Infinity"),
    (b'{"id": 1, "i": 0, "score": 1e999}', "outside the accepted range"),
    (b'{"id": 1, "i": 0, "score": -2e6}', "outside the accepted range"),
    (b'{"id": 1, "i": 1, "score": 1}', "not the answer to call 0"),
    (b'{"id": 9, "i": 0, "score": 1}', "not the answer to call 0"),
    (b'{"id": 1, "i": 0, "score": "1"}', "neither a score nor an error"),
    (b'{"id": 1, "i": 0}', "neither a score nor an error"),
    (b'[' * 100000, "not JSON"),
    (b'\xff\xfe', "not JSON"),
])
def test_answers_are_checked_on_the_trainers_side(line, problem):
    try:
        result = checked_result(line, 1, 0)
    except ProtocolError as e:
        assert problem in str(e)
    else:
        assert problem in result["error"]


def test_no_process_outlives_the_worker():
    tag = marker()
    code = ("import subprocess\ndef reward(prompt, completion, **row):\n"
            f"    subprocess.Popen(['sleep', '{tag}'], start_new_session=True)\n    return 1.0\n")
    r = PythonReward("r", code, "reward", "completion", 2.0, 128)
    assert score(r, "ok", "ok") == [1.0, 1.0]
    assert wait_until_gone(tag) == []  # each call's children are killed when it returns
    worker = r._worker
    assert worker is not None and worker.process.alive
    r.close()
    assert not worker.process.alive and wait_until_gone(tag) == []
    assert processes_with(str(worker.process.pid)) == []


def test_a_run_with_abusive_rewards_logs_each_and_finishes(tmp_path):
    spec = small_spec(steps=1, promptsPerStep=8, episodesPerStep=16)  # every episode reported
    spec["algorithm"]["groupSize"] = 2
    tag = marker()
    cases = {
        "a": "open('/etc/shadow').read()",
        "b": "socket.create_connection(('127.0.0.1', 6379), timeout=2)",
        "c": f"[os.fork() == 0 and os.execv('/usr/bin/sleep', ['sleep', '{tag}']) for _ in range(200)]",
        "d": "return 1e308",
        "e": "[os.write(fd, b'{\"score\": NaN}\\n') for fd in range(3, 20) if fd != 2 and os.path.exists(f'/proc/self/fd/{fd}')]\n        return 1.0",
        "f": "bytearray(1024 ** 3)",
        "g": "while True: pass",
    }
    body = "".join(f"    if letter == {k!r}:\n        {v}\n" for k, v in cases.items())
    spec["rewards"].append({
        "name": "abusive",
        "timeoutSeconds": 1,
        "memoryMb": 256,
        "failureScore": FAIL,
        "maxFailuresInARow": 1000,
        "source": {"kind": "python", "code": "import os, socket\ndef reward(prompt, completion, letter, **row):\n" + body + "    return 0.5\n"},
    })
    spec["environments"][0]["rewards"].append({"reward": "abusive", "weight": 1.0})
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    episodes = [e for e in result.events if e["type"] == "episode"]
    errors = [e["message"] for e in result.events if e["type"] == "log" and e["level"] == "error"]
    assert episodes
    failed = 0
    for e in episodes:
        letter = json.dumps(e)[json.dumps(e).index("say ") + 4]
        expected = 0.5 if letter == "h" else FAIL
        assert e["rewardComponents"]["abusive"] == expected, (letter, e["rewardComponents"])
        failed += expected == FAIL
    assert len(errors) == failed
    expected_reasons = {"a": "FileNotFoundError", "b": "ConnectionRefusedError", "c": ("BlockingIOError", "time limit"), "d": "outside the accepted range",
                        "e": "not a result", "f": "MemoryError", "g": "time limit"}
    for message in errors:
        letter = message[message.index('"letter": "') + 11]
        reasons = expected_reasons[letter]
        assert message.startswith('reward "abusive" failed') and any(r in message for r in (reasons if isinstance(reasons, tuple) else (reasons,))), message
    assert wait_until_gone(tag) == []


def descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        found += kids
        frontier += kids
    return found


def test_a_trainer_killed_with_sigkill_takes_its_sandboxes_along():
    # The worker is busy in a 30 s call when the trainer dies: only the sandbox's death with its
    # parent (not an end of input) can stop it in time.
    program = textwrap.dedent("""
        import threading, time
        from troupe.rewards.python_rewards import PythonReward
        r = PythonReward("r", "import time\\ndef reward(**kw):\\n    time.sleep(30)\\n    return 1.0\\n", "reward", "completion", 60.0, 128)
        r._worker = r._start()
        threading.Thread(target=r.score_many, args=([{"prompt": "p", "completion": "c"}], [{}]), daemon=True).start()
        time.sleep(1)
        print(r._worker.process.pid, flush=True)
        time.sleep(60)
    """)
    trainer = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        bwrap_pid = int(trainer.stdout.readline())
        sandbox = [bwrap_pid, *descendants(bwrap_pid)]
        assert len(sandbox) >= 3  # bwrap, its init in the sandbox, the worker
        trainer.kill()
        trainer.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in sandbox):
            time.sleep(0.05)
        assert [p for p in sandbox if os.path.exists(f"/proc/{p}")] == []
    finally:
        trainer.kill()
        trainer.wait()
