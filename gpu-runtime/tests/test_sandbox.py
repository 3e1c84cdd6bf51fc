"""troupe.sandbox under real bubblewrap: what code inside can and cannot reach, and its limits."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sandbox_helpers import listener, marker, processes_with, reachable, run_folders, wait_until_gone

from troupe.sandbox import Limits, Sandbox, SandboxTimeout, python_executable, sandbox_status

pytestmark = pytest.mark.skipif(not sandbox_status().usable, reason="needs bubblewrap (scripts/setup.sh installs it)")


def py(box: Sandbox, program: str, stdin: bytes = b""):
    return box.run([python_executable(), "-I", "-c", textwrap.dedent(program)], stdin)


def test_sandbox_is_up_and_runs_as_an_unprivileged_user():
    assert sandbox_status().mode == "bwrap"
    done = py(Sandbox(), "import os; print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())")
    assert done.returncode == 0, done.stderr
    uid, euid, gid, groups = done.stdout.decode().split(maxsplit=3)
    assert int(uid) != 0 and int(euid) != 0 and int(gid) != 0 and "0," not in groups and groups.strip() != "[0]"
    status = py(Sandbox(), "print(open('/proc/self/status').read())").stdout.decode()
    assert "CapEff:\t0000000000000000" in status and "NoNewPrivs:\t1" in status
    # `id` itself, as the issue asks
    done = Sandbox(python=False).run(["id"])
    assert done.returncode == 0 and b"uid=0(" not in done.stdout, done.stdout


def test_no_new_user_namespaces_but_threads_and_subprocesses_work():
    # A user namespace would give the code capabilities over fresh namespaces (seccomp.py refuses it).
    done = Sandbox(python=False).run(["unshare", "--user", "--map-root-user", "id"])
    assert done.returncode != 0 and b"Operation not permitted" in done.stderr, done
    done = py(Sandbox(), """
        import subprocess, threading
        out = []
        t = threading.Thread(target=lambda: out.append(subprocess.run(["echo", "child"], capture_output=True).stdout))
        t.start(); t.join()
        print(out[0].decode().strip())
    """)
    assert done.stdout.strip() == b"child", done


def test_environment_holds_only_the_allow_list(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://secret-db")
    monkeypatch.setenv("REDIS_URL", "redis://secret-redis")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    done = py(Sandbox(), "import os, json; print(json.dumps(dict(os.environ)))")
    env = json.loads(done.stdout)
    assert not {"DATABASE_URL", "REDIS_URL", "OPENAI_API_KEY"} & set(env)
    assert "secret" not in done.stdout.decode()
    assert env["HOME"] == "/tmp"


def test_files_outside_are_invisible_and_the_run_folder_is_read_only():
    mine = f"/tmp/{marker()}"
    with run_folders() as (root, run_a, run_b):
        box = Sandbox(run_dir=run_a)
        done = py(box, f"""
            import os, json
            out = {{"cwd": os.getcwd(), "own": open("secret.txt").read()}}
            for name, path in [("shadow", "/etc/shadow"), ("other_run", "{run_b}/secret.txt"), ("root", "{root}"),
                               ("coord", "/work/coord"), ("home", "/root/.bashrc"), ("runner_db", "/var/lib/postgresql")]:
                try:
                    out[name] = os.listdir(path) if os.path.isdir(path) else open(path).read()
                except OSError as e:
                    out[name] = type(e).__name__
            for name, path in [("write_run", "written.txt"), ("write_root", "/x"), ("write_usr", "/usr/x"), ("write_other", "{run_b}/x")]:
                try:
                    open(path, "w").write("x")
                    out[name] = "written"
                except OSError as e:
                    out[name] = type(e).__name__
            open("{mine}", "w").write("private")
            out["tmp"] = open("{mine}").read()
            print(json.dumps(out))
        """)
        out = json.loads(done.stdout)
        assert out["cwd"] == str(run_a) and out["own"] == "secret of run-a"  # positive control: the run's folder reads
        for name in ("shadow", "other_run", "home", "runner_db"):
            assert out[name] in ("FileNotFoundError", "PermissionError"), (name, out[name])
        assert out["root"] == ["run-a"]  # the work root holds only the way to its own run
        assert out["coord"] in ("FileNotFoundError", "PermissionError")
        for name in ("write_run", "write_root", "write_usr", "write_other"):
            assert out[name] in ("OSError", "PermissionError", "FileNotFoundError"), (name, out[name])
        assert out["tmp"] == "private"
        assert not (run_a / "written.txt").exists() and not (run_b / "x").exists()
        assert sorted(p.name for p in run_b.iterdir()) == ["secret.txt"]
    assert not os.path.exists(mine)  # the sandbox's /tmp was its own


def test_no_network_not_even_loopback_services():
    with listener() as port:
        ports = [port, 6379, 5432]
        assert reachable(port)  # positive control: the host reaches it
        host_view = {p: reachable(p) for p in ports}
        done = py(Sandbox(), f"""
            import socket, json
            out = {{}}
            for port in {ports}:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=2).close()
                    out[port] = "connected"
                except OSError as e:
                    out[port] = type(e).__name__
            print(json.dumps(out))
        """)
    out = json.loads(done.stdout)
    assert all(v != "connected" for v in out.values()), (out, host_view)


def test_proc_shows_only_the_sandbox():
    done = py(Sandbox(), f"""
        import os, json
        out = {{"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}}
        for pid in ({os.getpid()}, {os.getppid()}, 1):
            try:
                out[str(pid)] = open(f"/proc/{{pid}}/environ", "rb").read().decode(errors="replace")
            except OSError as e:
                out[str(pid)] = type(e).__name__
        print(json.dumps(out))
    """)
    out = json.loads(done.stdout)
    assert max(out["pids"]) < 10, out["pids"]  # its own pid namespace: a handful of processes
    assert out[str(os.getpid())] in ("FileNotFoundError", "PermissionError")
    assert out[str(os.getppid())] in ("FileNotFoundError", "PermissionError")
    assert out["1"] in ("PermissionError", ""), out["1"]  # bubblewrap's init: root's, and started with PATH only


def test_a_fork_loop_stops_at_the_process_limit_and_nothing_outlives_the_sandbox():
    tag = marker()
    done = py(Sandbox(Limits(processes=16, wall_seconds=20)), f"""
        import os
        made = 0
        try:
            for _ in range(200):
                if os.fork() == 0:
                    os.setsid()
                    os.execv("/usr/bin/sleep", ["sleep", "{tag}"])
                made += 1
        except OSError as e:
            print("stopped after", made, type(e).__name__, flush=True)
    """)
    assert b"stopped after" in done.stdout and b"BlockingIOError" in done.stdout, done
    made = int(done.stdout.split()[2])
    assert made < 16
    assert wait_until_gone(tag) == []  # the sleepers died with the sandbox's init


def test_memory_limit_stops_a_1gb_allocation():
    done = py(Sandbox(Limits(memory_mb=256)), """
        try:
            x = bytearray(1024 ** 3)
            print("allocated")
        except MemoryError:
            print("MemoryError")
    """)
    assert done.stdout.strip() == b"MemoryError"


def test_an_infinite_loop_is_killed_at_the_wall_clock_and_its_children_with_it():
    tag = marker()
    started = time.monotonic()
    done = py(Sandbox(Limits(wall_seconds=2)), f"""
        import os, subprocess
        subprocess.Popen(["sleep", "{tag}"], start_new_session=True)
        while True:
            pass
    """)
    assert done.timed_out and done.returncode is None
    assert time.monotonic() - started < 10
    assert wait_until_gone(tag) == []


def test_cpu_limit_kills_a_busy_process():
    done = py(Sandbox(Limits(cpu_seconds=1, wall_seconds=30)), "while True: pass")
    assert not done.timed_out and done.returncode is not None and done.returncode != 0


def test_100mb_of_output_is_cut_at_the_cap_and_never_held():
    # In a fresh interpreter, so its peak memory says what reading 100 MB cost.
    program = textwrap.dedent("""
        import resource, sys
        from troupe.sandbox import Limits, Sandbox
        done = Sandbox(Limits(output_bytes=1_000_000, wall_seconds=60)).run(
            ["sh", "-c", "head -c 100000000 /dev/zero; echo done"], b"")
        print(done.output_exceeded, len(done.stdout) + len(done.stderr), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """)
    baseline = subprocess.run([sys.executable, "-c", "import resource, troupe.sandbox; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
                              capture_output=True, text=True, check=True)
    done = subprocess.run([sys.executable, "-c", program, baseline.stdout.strip()], capture_output=True, text=True, timeout=120)
    exceeded, kept, peak_kb = done.stdout.split()
    assert exceeded == "True" and int(kept) <= 1_000_000
    assert int(peak_kb) - int(baseline.stdout) < 20_000, (peak_kb, baseline.stdout)  # < 20 MB more than importing


def test_a_long_lived_process_answers_lines_and_a_timeout_kills_it():
    box = Sandbox(Limits(wall_seconds=60))
    process = box.start([python_executable(), "-I", "-c", "import sys\nfor line in sys.stdin: print(line.strip()[::-1], flush=True)"])
    try:
        process.write(b"abc\n", time.monotonic() + 10)
        assert process.read_line(time.monotonic() + 10, 100) == b"cba"
        process.write(b"xy\n", time.monotonic() + 10)
        assert process.read_line(time.monotonic() + 10, 100) == b"yx"
        with pytest.raises(SandboxTimeout):
            process.read_line(time.monotonic() + 0.5, 100)  # nothing asked: no answer
        assert not process.alive
    finally:
        process.close()


def test_missing_bubblewrap_is_said_and_specs_with_python_rewards_are_refused_by_field(monkeypatch, tmp_path):
    from runtime_helpers import small_spec

    from troupe.spec import SpecError, check_supported, load_spec

    spec = small_spec(steps=1)
    spec["rewards"].append({"name": "mine", "source": {"kind": "python", "code": "def reward(**kw):\n    return 1"}})
    spec["environments"][0]["rewards"].append({"reward": "mine", "weight": 1})
    filled = load_spec(spec)
    check_supported(filled, cuda_available=False)  # bubblewrap here: accepted
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    monkeypatch.delenv("TROUPE_BWRAP", raising=False)
    assert not sandbox_status().usable and "bubblewrap (bwrap) is not installed" in sandbox_status().reason
    with pytest.raises(SpecError) as refused:
        check_supported(filled, cuda_available=False)
    assert refused.value.field == "rewards.1.source.kind" and "TROUPE_SANDBOX=off" in str(refused.value)
    check_supported(filled, cuda_available=False, in_process={"mine"})  # a library function runs in process
    monkeypatch.setenv("TROUPE_SANDBOX", "off")
    check_supported(filled, cuda_available=False)  # the operator's explicit opt-out
    assert sandbox_status().usable and "UNSANDBOXED" in sandbox_status().reason
    monkeypatch.setenv("TROUPE_SANDBOX", "maybe")
    with pytest.raises(SpecError, match='TROUPE_SANDBOX="maybe" is not understood'):
        check_supported(filled, cuda_available=False)


def test_opt_out_runs_unsandboxed_with_limits_and_a_clean_environment(monkeypatch):
    monkeypatch.setenv("TROUPE_SANDBOX", "off")
    monkeypatch.setenv("DATABASE_URL", "postgresql://secret-db")
    done = py(Sandbox(Limits(memory_mb=256)), """
        import os
        try:
            bytearray(1024 ** 3)
        except MemoryError:
            print("MemoryError", os.environ.get("DATABASE_URL"))
    """)
    assert done.stdout.split() == [b"MemoryError", b"None"]


def test_processes_running_before_are_untouched():
    # The sandbox kills its own processes only: a host process with the same kind of command line lives on.
    tag = marker()
    host = subprocess.Popen(["sleep", tag])
    try:
        py(Sandbox(Limits(wall_seconds=1)), "while True: pass")
        assert processes_with(tag) == [host.pid]
    finally:
        host.kill()
        host.wait()


def test_limits_from_spec_settings_name_the_bad_one():
    limits = Limits.from_settings({"memoryMb": 128, "cpuSeconds": 3, "processes": 8, "outputBytes": 1000, "network": False})
    assert (limits.memory_mb, limits.cpu_seconds, limits.processes, limits.output_bytes) == (128, 3, 8, 1000)
    assert Limits.from_settings(None, memory_mb=64).memory_mb == 64
    with pytest.raises(ValueError, match="network access is not supported"):
        Limits.from_settings({"network": True})
    with pytest.raises(ValueError, match="processes must be a positive integer"):
        Limits.from_settings({"processes": 0})
    with pytest.raises(ValueError, match="unknown sandbox settings: gpu"):
        Limits.from_settings({"gpu": 1})


SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(SYSTEM_PYTHON), reason="needs root (to become another user) and a system python")
def test_a_non_root_runtime_gets_nobody_in_a_user_namespace():
    # The runtime as user nobody (a system interpreter: the venv's may sit under /root), importing
    # troupe.sandbox alone (the package's __init__ needs the venv's dependencies).
    src = str(Path(__file__).resolve().parents[1] / "src" / "troupe")
    program = textwrap.dedent(f"""
        import json, os, sys, types
        pkg = types.ModuleType("troupe"); pkg.__path__ = [{src!r}]; sys.modules["troupe"] = pkg
        from troupe.sandbox import Limits, Sandbox, python_executable
        me = Sandbox().run([python_executable(), "-I", "-c", "import os; print(os.getuid(), os.geteuid())"])
        forks = Sandbox(Limits(processes=8), python=False).run(["sh", "-c", "for i in $(seq 20); do sleep 1 & done; wait; echo all"])
        userns = Sandbox(python=False).run(["unshare", "--user", "id"])
        print(json.dumps([me.stdout.decode(), forks.stdout.decode(), forks.stderr.decode(), userns.returncode]))
    """)
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", SYSTEM_PYTHON, "-c", program],
                          capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"}, cwd="/tmp")
    if "Permission denied" in done.stderr and src in done.stderr:
        pytest.skip("the checkout is not readable by nobody")
    me, forks_out, forks_err, userns_code = json.loads(done.stdout)
    assert me.split() == ["65534", "65534"], me
    assert "all" not in forks_out and "fork" in forks_err.lower(), (forks_out, forks_err)
    assert userns_code != 0


def test_cli_says_whether_user_code_can_run(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "troupe.sandbox", "--json"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and json.loads(ok.stdout)["usable"] is True
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on PATH
    env.pop("TROUPE_BWRAP", None)
    missing = subprocess.run([sys.executable, "-m", "troupe.sandbox"], capture_output=True, text=True, timeout=60, env=env)
    assert missing.returncode == 1 and missing.stdout.startswith("sandbox: UNAVAILABLE: bubblewrap (bwrap) is not installed")
    off = subprocess.run([sys.executable, "-m", "troupe.sandbox"], capture_output=True, text=True, timeout=60, env={**env, "TROUPE_SANDBOX": "off"})
    assert off.returncode == 0 and "UNSANDBOXED" in off.stdout


FORK_BOMB_REWARD = '''
import os, time

def _held_mb():
    # Proportional set sizes (Pss): a page shared by n processes counts 1/n in each, so the sum is what the
    # sandbox really holds. Summing VmRSS counted the interpreter's copy-on-write pages once per fork (771 MB
    # "held" under a 768 MB cgroup on CI); VmRSS stays only where smaps_rollup is missing (kernels < 4.14).
    total = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                try:
                    lines, key = open(f"/proc/{name}/smaps_rollup").read().splitlines(), "Pss:"
                except FileNotFoundError:
                    lines, key = open(f"/proc/{name}/status").read().splitlines(), "VmRSS:"
                total += sum(int(line.split()[1]) for line in lines if line.startswith(key))
            except OSError:
                continue
    return total / 1024

def _children(state_zombie):
    me, found = os.getpid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = open(f"/proc/{name}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if (fields[0] == "Z") == state_zombie and (state_zombie or int(fields[1]) == me):
                found += 1
    return found

def reward(prompt, completion, **row):
    if completion == "zombies":
        return _children(state_zombie=True)  # every zombie in this sandbox's own /proc
    for _ in range(8):
        if os.fork() == 0:
            try:
                block = b"x" * (400 << 20)  # written, so every page is really held
                time.sleep(60)
            finally:
                os._exit(0)
    time.sleep(4)
    return _held_mb()  # what every process of this sandbox holds now (its own /proc shows only them)
'''


def test_eight_forks_of_400mb_in_a_512mb_reward_are_killed_and_leave_no_zombies():
    """Issue 30: memory is bounded per sandbox (one cgroup), not per process: 8 x 400 MB (3.2 GB) in a reward
    of memoryMb 512 (+ the interpreter's 256) is cut down by the kernel to what fits; the killed children are
    reaped, so no zombie holds the task limit for the worker's life."""
    from troupe.rewards.python_rewards import INTERPRETER_MB, PythonReward
    from troupe.sandbox.memory_scope import scope_status

    assert "one cgroup" in scope_status(), scope_status()  # this host can make them (the capabilities line says)
    reports = []
    r = PythonReward("forks", FORK_BOMB_REWARD, "reward", "completion", 20.0, 512, report=reports.append, failure_score=-1.0)
    try:
        held_mb = r.score_many([{"prompt": "p", "completion": "fork"}], [{}])[0]
        assert 0 < held_mb <= 512 + INTERPRETER_MB, (held_mb, reports)  # not 8 x 400 MB: the kernel killed the rest
        assert r.score_many([{"prompt": "p", "completion": "zombies"}], [{}]) == [0.0], reports
    finally:
        r.close()


def test_without_a_cgroup_the_capabilities_line_says_the_bound_is_per_process(monkeypatch, tmp_path):
    from troupe.sandbox import memory_scope

    monkeypatch.setenv(memory_scope.ENV_VAR, str(tmp_path / "not-a-cgroup"))
    assert memory_scope.usable_base() is None and memory_scope.MemoryScope.create(1 << 20) is None
    assert "bounded per process only: up to processes x memoryMb" in memory_scope.scope_status()


def test_sandbox_cgroups_left_by_a_killed_runtime_are_removed(monkeypatch):
    from troupe.sandbox import memory_scope

    base = memory_scope.usable_base()
    assert base is not None, memory_scope.scope_status()
    assert not Path("/proc/4194300").exists()  # a runtime that is gone
    orphan = base.folder / "troupe-sandbox-4194300-1"
    orphan.mkdir()
    monkeypatch.setattr(memory_scope.MemoryScope, "_count", 0)
    scope = memory_scope.MemoryScope.create(64 << 20)
    try:
        assert scope is not None and not orphan.exists()
    finally:
        scope.close()
        if orphan.exists():
            orphan.rmdir()
    assert not scope.folder.exists()
