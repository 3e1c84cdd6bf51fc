"""Remote environments: 10,000 concurrent sessions (#28; 1,000 in #17) against one reference server on
this host, over each transport (JSON over HTTP, gRPC) in the same run.

    .venv/bin/python bench/runtime/remote_env.py [--transport both|http|grpc] [--sessions 10000] [--turns 3]
        [--repeats 2] [--max-concurrent 256]

For each transport, a server (`python -m troupe.envserver troupe.remote.examples:Countdown --port P` or
`--grpc P`, a separate process) hosts a trivial environment, so the numbers are the protocol's and the
server's cost, not an environment's. The client is the runtime's own (troupe.remote.client.connect with
the spec's `remote.maxConcurrentSessions`: every call through its SessionGate, at most that many in
flight, the rest queued in the runner; HTTP pools as many connections, gRPC uses one channel). Calls go
through `call_many`, the function RemoteEnvironment's reset_many/step_many use. What it times:

- baseline: one session alone, its reset and steps one after another (an idle server);
- load: N sessions at once, as a step of N episodes calls them: every reset together, then each
  turn's N steps together. Per request: from the round's start to its parsed reply (the wait in the
  gate's queue included, as an episode waits it): the latency a turn adds to an episode. Episodes/s:
  N over the wall time of the reset and every turn. Lost episodes: sessions whose calls failed or
  whose last step did not report done.
- memory: the runtime process's RSS, sampled every 20 ms during the load, minus its RSS before the
  client was made (the server is another process; its peak RSS is printed apart);
- trainer slowdown: a numpy matmul loop in another thread of the runtime process (it releases the
  GIL, as torch's kernels do) runs during the load and alone; the ratio of its iteration rates is
  what the sessions cost a trainer sharing the process (and, on a small host, its cores).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np

from troupe.envs.remote.client import LoopClient, RemoteFailure, connect
from troupe.envs.remote.gate import SessionLimits
from troupe.envs.remote.protocol import ResetReply, StepReply

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(transport: str, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "troupe.envserver", "troupe.remote.examples:Countdown", "--grpc" if transport == "grpc" else "--port", str(port),
         "--session-ttl", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        raise SystemExit(f"the server did not start: {line}")
    return proc


def timed_round(client: LoopClient, route: str, bodies: list[dict], parse) -> tuple[list[float], float, list]:
    """One round through the runtime's `call_many` (its SessionGate included): (per request: round start
    to parsed reply, s; the round's wall s; each reply or RemoteFailure)."""
    done_at: list[float] = []
    t0 = time.perf_counter()

    def timed(data):
        reply = parse(data)
        done_at.append(time.perf_counter())
        return reply

    replies = client.call_many(route, bodies, timed)
    wall = time.perf_counter() - t0
    return [t - t0 for t in done_at], wall, replies


def episode_rounds(client: LoopClient, sessions: int, turns: int) -> dict:
    ids = [uuid.uuid4().hex for _ in range(sessions)]
    lat, walls, failed, ended = [], [], set(), {}
    rounds = [("reset", [{"session": s, "row": {"start": turns}, "actors": ["a"]} for s in ids], ResetReply.parse)]
    rounds += [("step", [{"session": s, "actor": "a", "text": str(turns - t)} for s in ids], StepReply.parse) for t in range(turns)]
    t0 = time.perf_counter()
    for route, bodies, parse in rounds:
        l, w, replies = timed_round(client, route, bodies, parse)
        lat.extend(l)
        walls.append(w)
        for s, r in zip(ids, replies):
            if isinstance(r, RemoteFailure):
                failed.add(s)
            elif route == "step":
                ended[s] = bool(r.done)
    wall = time.perf_counter() - t0
    lost = sum(1 for s in ids if s in failed or not ended.get(s))
    return {"lat": lat, "walls": walls, "wall": wall, "lost": lost, "failures": len(failed)}


def rss_mib(pid: str = "self", field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Sampler:
    """Peak RSS of this process while a block runs, sampled every 20 ms."""

    def __enter__(self):
        self.peak, self._stop = rss_mib(), threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_mib())

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


class Trainer:
    """A stand-in trainer's compute in another thread: 256x256 float32 matmuls, counted."""

    def __enter__(self):
        self.n, self._stop = 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self.t0 = time.perf_counter()
        self._t.start()
        return self

    def _run(self):
        a = np.random.default_rng(0).standard_normal((256, 256), dtype=np.float32)
        while not self._stop.is_set():
            a = np.tanh(a @ a)
            self.n += 1

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.rate = self.n / (time.perf_counter() - self.t0)


def pct(values: list[float]) -> dict[str, float]:
    a = np.array(values) * 1000
    return {"p50": float(np.percentile(a, 50)), "p90": float(np.percentile(a, 90)), "p99": float(np.percentile(a, 99)), "max": float(a.max())}


def measure(transports: list[str], args: argparse.Namespace) -> dict[str, dict]:
    """Each transport: its own server process and the runtime's client. Their repeats alternate (http,
    grpc, http, ...), so a change in the machine's load falls on both alike."""
    servers, clients = {}, {}
    limits = SessionLimits(args.max_concurrent)
    out: dict[str, dict] = {t: {"base": [], "load": [], "walls": [], "eps": [], "lost": 0, "failures": 0, "rss": [], "trainer": []} for t in transports}
    rss0 = rss_mib()
    try:
        for t in transports:
            port = free_port()
            servers[t] = start_server(t, port)
            clients[t] = connect(f"{t}://127.0.0.1:{port}", timeout_s=60, limits=limits)
        for t in transports:
            episode_rounds(clients[t], 50, args.turns)  # warm up
        for _ in range(args.repeats * 20):
            for t in transports:
                r = episode_rounds(clients[t], 1, args.turns)
                assert r["lost"] == 0
                out[t]["base"].extend(r["lat"])
        for _ in range(args.repeats):
            for t in transports:
                with Trainer() as alone:
                    time.sleep(2.0)
                with Sampler() as mem, Trainer() as busy:
                    r = episode_rounds(clients[t], args.sessions, args.turns)
                o = out[t]
                o["load"].extend(r["lat"]), o["walls"].extend(r["walls"]), o["eps"].append(args.sessions / r["wall"])
                o["lost"] += r["lost"]
                o["failures"] += r["failures"]
                o["rss"].append(mem.peak - rss0)
                o["trainer"].append(busy.rate / alone.rate)
        for t in transports:
            out[t]["server_peak"] = rss_mib(str(servers[t].pid), "VmHWM")
            out[t]["gate"] = (clients[t].gate.peak_in_flight, clients[t].gate.queued_peak)
        return out
    finally:
        for client in clients.values():
            client.close()
        for server in servers.values():
            server.terminate()
            server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=("both", "http", "grpc"), default="both")
    parser.add_argument("--sessions", type=int, default=10000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-concurrent", type=int, default=256, help="remote.maxConcurrentSessions (the runtime's default)")
    args = parser.parse_args()
    transports = ["http", "grpc"] if args.transport == "both" else [args.transport]
    results = measure(transports, args)
    baseline = pct(results[transports[0]]["base"])
    print(f"host: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; one server process per transport; "
          f"maxConcurrentSessions {args.max_concurrent}; {args.sessions} sessions x (reset + {args.turns} turns) x {args.repeats} repeats")
    print(f"baseline for every ratio: {transports[0]}, 1 session alone")
    for t, r in results.items():
        b, l = pct(r["base"]), pct(r["load"])
        print(f"[{t}] 1 session ({len(r['base'])} requests):      " + "  ".join(f"{k} {v:.2f} ms" for k, v in b.items()))
        print(f"[{t}] {args.sessions} concurrent sessions ({len(r['load'])} requests, {r['failures']} sessions failed, {r['lost']} episodes lost): "
              + "  ".join(f"{k} {v:.0f} ms" for k, v in l.items()))
        print(f"[{t}] round of {args.sessions} requests (reset or one turn): wall p50 {np.median(r['walls']) * 1000:.0f} ms, "
              f"max {max(r['walls']) * 1000:.0f} ms = {args.sessions / np.median(r['walls']):.0f} requests/s; "
              f"episodes/s {' '.join(f'{e:.0f}' for e in r['eps'])}")
        print(f"[{t}] latency a turn adds (p50, p99 minus the baseline's): {l['p50'] - baseline['p50']:.0f} ms, {l['p99'] - baseline['p99']:.0f} ms")
        print(f"[{t}] runtime RSS over its start, peak per repeat: {' '.join(f'{m:.0f}' for m in r['rss'])} MiB; server peak RSS {r['server_peak']:.0f} MiB; "
              f"gate: {r['gate'][0]} in flight at most, {r['gate'][1]} queued at most")
        print(f"[{t}] stand-in trainer's matmul rate during the load / alone: {' '.join(f'{x:.2f}' for x in r['trainer'])}")
    if len(results) == 2:
        h, g = pct(results["http"]["load"]), pct(results["grpc"]["load"])
        print(f"grpc / http at {args.sessions} sessions: p50 x{g['p50'] / h['p50']:.2f}, p99 x{g['p99'] / h['p99']:.2f}; "
              f"round wall x{np.median(results['grpc']['walls']) / np.median(results['http']['walls']):.2f}")


if __name__ == "__main__":
    main()
