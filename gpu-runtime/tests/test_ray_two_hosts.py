"""Two hosts for real (#28): a Ray head and a Ray worker on two network hosts of this test's own making, a
2-rank run that Ray places one rank per host, its per-step values equal to the single-host 2-rank run.

Hosts: two network namespaces, `a` (10.77.0.1/24) and `b` (10.77.0.2/24), joined by one veth pair. A veth
pair is a cable between exactly two ends, which is all two hosts need, so there is no bridge, and the root
namespace is on neither end: nothing here reaches, or is reached from, the machine's own network, and a second
copy of this test running at the same time has its own pair (the addresses repeat harmlessly). Each namespace
has only its loopback and its veth end, so two ranks in different namespaces can only meet over the cable.

Host a runs the Ray head and the supervisor (`python -m troupe run` with `cluster.address` the head's
"10.77.0.1:6379", as a user on a login node would); host b runs a Ray worker. Each node offers 1 CPU and the
spec asks STRICT_SPREAD, so its two 1-CPU bundles can only land one per host; the run's "ranks placed" log says
where Ray put each rank, and the test asserts one rank on each address. The host name of this machine
resolves to 127.0.0.1: before ray_ranks.py took the rendezvous address from Ray's node address and bound gloo
to the interface holding it, this run hung (rank 1 looked for rank 0's store on its own loopback).

Shared storage: both hosts share this machine's file system, so the work folder is the same path on both,
which is what ray_ranks.py asks of several nodes (NFS or a ReadWriteMany claim in a real deployment).

Cleanup, on failure too: every process in the two namespaces (`ip netns pids`: exactly what this test started
there, the Ray nodes and their workers) is killed by pid, then any process still naming this test's Ray temp
folder, then the namespaces are deleted, which deletes the veth pair. Not `ray stop`: it kills every Ray
process of the machine by name (the process table is shared), other tests' included.

Reference: the same spec and seed run by 2 ranks on one host (torchrun, in process), compared as
test_distributed.py compares its runs (1e-5 relative; `loss`, about 1e-8, absolutely). Skipped, with the
reason, only where namespaces cannot be made (tried: not root, no `ip`, no netns support) or Ray is absent.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_distributed import ABSOLUTE, COMPARED, _assert_same_steps, _run, _spec

from troupe.run import RunResult

pytestmark = pytest.mark.slow

STEPS = 3
HEAD_PORT = 6379  # inside namespace a: no other Ray on the machine can hold it
ADDRESSES = ("10.77.0.1", "10.77.0.2")
NICE = ["nice", "-n", str(max(0, 10 - os.nice(0)))]  # at least niceness 10, as the suite's own command


@dataclass(frozen=True)
class TwoHosts:
    namespaces: tuple[str, str]
    addresses: tuple[str, str]
    head: str  # the Ray head's "ip:port", on host a


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


def _must(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, f"{' '.join(result.args)}: {result.stderr.strip()}"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _kill(pids: list[int]) -> None:
    """SIGTERM, a short grace, then SIGKILL (Ray's GCS outlasts a SIGTERM by seconds): only these pids."""
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        pids = [p for p in pids if _alive(p)]
        if not pids:
            return


def _namespace_pids(namespace: str) -> list[int]:
    return [int(p) for p in _ip("netns", "pids", namespace).stdout.split()]


def _naming(needle: str) -> list[int]:
    """Processes whose command line names `needle` (this test's Ray temp folder)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if needle.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return [p for p in found if p != os.getpid()]


def _ray(namespace: str, *args: str, temp_dir: Path) -> None:
    ray = Path(sys.executable).with_name("ray")
    started = subprocess.run(
        [*NICE, "ip", "netns", "exec", namespace, str(ray), "start", *args, "--num-cpus=1", f"--temp-dir={temp_dir}", "--disable-usage-stats"],
        capture_output=True, text=True, timeout=120,
    )
    assert started.returncode == 0, f"ray start in {namespace}: {started.stdout[-2000:]}{started.stderr[-2000:]}"


@pytest.fixture
def two_hosts() -> Iterator[TwoHosts]:
    pytest.importorskip("ray", reason="Ray is the cluster extra (pip install troupe[cluster]); setup.sh installs it for the tests")
    tag = secrets.token_hex(3)
    namespaces = (f"troupe-a-{tag}", f"troupe-b-{tag}")
    ends = (f"t2ha{tag}", f"t2hb{tag}")  # interface names: 15 characters at most
    # Short: Ray's unix sockets live under it (108 bytes at most for a socket path).
    temp_dir = Path(f"/tmp/t2h-{tag}")
    try:
        made = _ip("netns", "add", namespaces[0])
    except FileNotFoundError:
        pytest.skip("network namespaces cannot be made here: no `ip` command (iproute2)")
    if made.returncode != 0:
        pytest.skip(f"network namespaces cannot be made here (they need root with CAP_SYS_ADMIN and CAP_NET_ADMIN): ip netns add: {made.stderr.strip()}")
    began = time.monotonic()
    try:
        _must(_ip("netns", "add", namespaces[1]))
        _must(_ip("link", "add", ends[0], "type", "veth", "peer", "name", ends[1]))
        for namespace, end, address in zip(namespaces, ends, ADDRESSES):
            _must(_ip("link", "set", end, "netns", namespace))
            _must(_ip("-n", namespace, "addr", "add", f"{address}/24", "dev", end))
            _must(_ip("-n", namespace, "link", "set", end, "up"))
            _must(_ip("-n", namespace, "link", "set", "lo", "up"))  # Ray's node-local sockets and the driver's
        head = f"{ADDRESSES[0]}:{HEAD_PORT}"
        _ray(namespaces[0], "--head", f"--node-ip-address={ADDRESSES[0]}", f"--port={HEAD_PORT}", "--include-dashboard=false", temp_dir=temp_dir / "a")
        _ray(namespaces[1], f"--address={head}", f"--node-ip-address={ADDRESSES[1]}", temp_dir=temp_dir / "b")
        print(f"two hosts: the Ray cluster of two namespaces started in {time.monotonic() - began:.1f}s")
        yield TwoHosts(namespaces, ADDRESSES, head)
    finally:
        ended = time.monotonic()
        _kill(sorted({*_namespace_pids(namespaces[0]), *_namespace_pids(namespaces[1]), *_naming(str(temp_dir))}))
        for namespace in namespaces:
            _ip("netns", "del", namespace)
        _ip("link", "del", ends[0])  # only there when setup failed before moving it; deleting a namespace deletes its end
        shutil.rmtree(temp_dir, ignore_errors=True)
        print(f"two hosts: torn down in {time.monotonic() - ended:.1f}s")


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_two_rank_run_across_two_hosts_equals_the_single_host_run(two_hosts: TwoHosts, tmp_path: Path):
    started = time.monotonic()
    spec = _spec("fsdp2", 2, steps=STEPS)
    spec["cluster"] = {"kind": "ray", "address": two_hosts.head, "strategy": "STRICT_SPREAD"}
    work = tmp_path / "two-hosts"
    work.mkdir()
    (work / "spec.json").write_text(json.dumps(spec))
    run = subprocess.run(
        [*NICE, "ip", "netns", "exec", two_hosts.namespaces[0], sys.executable, "-m", "troupe", "run", str(work / "spec.json"),
         "--events", str(work / "events.jsonl"), "--work-dir", str(work)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "TROUPE_RAY_PLACEMENT_TIMEOUT": "60"},
    )
    crossed = time.monotonic() - started
    events = _events(work / "events.jsonl") if (work / "events.jsonl").exists() else []
    terminal = events[-1] if events else {}
    assert terminal.get("state") == "succeeded", f"exit {run.returncode}, {terminal}\n{run.stderr[-4000:]}"
    assert run.returncode == 0
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))  # relayed from rank 0 on either host

    placed = [e["message"] for e in events if e["type"] == "log" and e["message"].startswith("ranks placed:")]
    assert len(placed) == 1, placed
    nodes = dict((int(r), ip) for r, ip in re.findall(r"rank (\d+) on node ([\d.]+)", placed[0]))
    assert sorted(nodes) == [0, 1] and sorted(nodes.values()) == sorted(two_hosts.addresses), placed[0]

    one_host = _run(tmp_path / "one-host", _spec("fsdp2", 2, steps=STEPS))
    assert one_host.state == "succeeded", one_host.message
    across = RunResult(terminal["state"], 0, terminal.get("message", ""), STEPS, None, events)
    _assert_same_steps(one_host, across, range(1, STEPS + 1))
    gaps = {name: max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(one_host.metrics(name), across.metrics(name))) for name in COMPARED}
    gaps |= {name: max(abs(a - b) for a, b in zip(one_host.metrics(name), across.metrics(name))) for name in ABSOLUTE}
    print(f"two hosts: {crossed:.1f}s for the cross-host run, {time.monotonic() - started:.1f}s in all; ranks {nodes}; largest gaps {gaps}")
