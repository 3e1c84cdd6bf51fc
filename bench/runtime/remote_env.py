"""Remote environments: 1,000 concurrent sessions against one reference server on this host, over
each transport (JSON over HTTP, gRPC) in the same run.

    .venv/bin/python bench/runtime/remote_env.py [--transport both|http|grpc] [--sessions 1000] [--turns 3] [--repeats 3]

For each transport, a server (`python -m troupe.envserver troupe.remote.examples:Countdown --port P` or
`--grpc P`, a separate process) hosts a trivial environment, so the numbers are the protocol's and the
server's cost, not an environment's. The client is the runtime's own (troupe.remote.client.connect:
aiohttp with the runtime's pool of 256 connections, or one grpc.aio channel). What it times:

- baseline: one session alone, its reset and steps one after another (an idle server);
- load: N sessions at once, as a step of N episodes calls them: every reset together, then
  each turn's N steps together. Per request: the time from sending to its parsed reply
  (time in the client's connection-pool queue included, as an episode waits it).
Both transports' repeats alternate in one run. Prints p50/p90/p99/max per request, the wall time of
each round (requests/s), and the load's percentiles as ratios of one baseline, HTTP's one session
alone (the first transport), the same for both; then gRPC's load percentiles over HTTP's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np

from troupe.envs.remote.client import LoopClient, RemoteClient, RemoteFailure, connect
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
         "--session-ttl", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        raise SystemExit(f"the server did not start: {line}")
    return proc


def timed_round(client: LoopClient, route: str, bodies: list[dict], parse) -> tuple[list[float], float, int]:
    """Each request timed on the client's loop from send to parsed reply; (latencies s, wall s, failures)."""

    async def one(body: dict) -> tuple[float, bool]:
        t0 = time.perf_counter()
        try:
            await client._post(route, body, parse)
            ok = True
        except RemoteFailure:
            ok = False
        return time.perf_counter() - t0, ok

    async def all_of() -> list[tuple[float, bool]]:
        return await asyncio.gather(*(one(b) for b in bodies))

    t0 = time.perf_counter()
    results = asyncio.run_coroutine_threadsafe(all_of(), client._loop).result()
    wall = time.perf_counter() - t0
    return [r[0] for r in results], wall, sum(1 for r in results if not r[1])


def episode_rounds(client: LoopClient, sessions: int, turns: int) -> tuple[list[float], list[float], int]:
    ids = [uuid.uuid4().hex for _ in range(sessions)]
    rounds = [timed_round(client, "reset", [{"session": s, "row": {"start": turns}, "actors": ["a"]} for s in ids], ResetReply.parse)]
    for t in range(turns):
        rounds.append(timed_round(client, "step", [{"session": s, "actor": "a", "text": str(turns - t)} for s in ids], StepReply.parse))
    latencies = [x for lat, _, _ in rounds for x in lat]
    return latencies, [w for _, w, _ in rounds], sum(f for _, _, f in rounds)


def pct(values: list[float]) -> dict[str, float]:
    a = np.array(values) * 1000
    return {"p50": float(np.percentile(a, 50)), "p90": float(np.percentile(a, 90)), "p99": float(np.percentile(a, 99)), "max": float(a.max())}


def measure(transports: list[str], args: argparse.Namespace) -> dict[str, dict]:
    """Each transport: its own server process and the runtime's client. Their repeats alternate (http,
    grpc, http, ...), so a change in the machine's load falls on both alike."""
    servers, clients = [], {}
    try:
        for t in transports:
            port = free_port()
            servers.append(start_server(t, port))
            url = f"{t}://127.0.0.1:{port}"
            clients[t] = RemoteClient(url, timeout_s=60, max_connections=args.connections) if t == "http" else connect(url, timeout_s=60)
        out: dict[str, dict] = {t: {"base": [], "load": [], "walls": [], "failures": 0} for t in transports}
        for t in transports:
            episode_rounds(clients[t], 50, args.turns)  # warm up
        for _ in range(args.repeats * 20):
            for t in transports:
                lat, _, fails = episode_rounds(clients[t], 1, args.turns)
                assert fails == 0
                out[t]["base"].extend(lat)
        for _ in range(args.repeats):
            for t in transports:
                lat, w, fails = episode_rounds(clients[t], args.sessions, args.turns)
                out[t]["load"].extend(lat)
                out[t]["walls"].extend(w)
                out[t]["failures"] += fails
        return out
    finally:
        for client in clients.values():
            client.close()
        for server in servers:
            server.terminate()
            server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=("both", "http", "grpc"), default="both")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--connections", type=int, default=256, help="the HTTP client's connection pool (the runtime's default)")
    args = parser.parse_args()
    transports = ["http", "grpc"] if args.transport == "both" else [args.transport]
    results = measure(transports, args)
    baseline = pct(results[transports[0]]["base"])
    print(f"host: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; one server process per transport; "
          f"HTTP client pool {args.connections} connections, gRPC one channel")
    print(f"baseline for every ratio: {transports[0]}, 1 session alone")
    for t, r in results.items():
        b, l = pct(r["base"]), pct(r["load"])
        print(f"[{t}] 1 session ({len(r['base'])} requests):      " + "  ".join(f"{k} {v:.2f} ms" for k, v in b.items()))
        print(f"[{t}] {args.sessions} concurrent sessions ({len(r['load'])} requests, {r['failures']} failed): "
              + "  ".join(f"{k} {v:.1f} ms" for k, v in l.items()))
        print(f"[{t}] round of {args.sessions} requests (reset or one turn): wall p50 {np.median(r['walls']) * 1000:.0f} ms, "
              f"max {max(r['walls']) * 1000:.0f} ms = {args.sessions / np.median(r['walls']):.0f} requests/s")
        print(f"[{t}] ratios to the baseline (same percentile): p50 x{l['p50'] / baseline['p50']:.0f}, p90 x{l['p90'] / baseline['p90']:.0f}, "
              f"p99 x{l['p99'] / baseline['p99']:.0f}")
    if len(results) == 2:
        h, g = pct(results["http"]["load"]), pct(results["grpc"]["load"])
        print(f"grpc / http at {args.sessions} sessions: p50 x{g['p50'] / h['p50']:.2f}, p90 x{g['p90'] / h['p90']:.2f}, p99 x{g['p99'] / h['p99']:.2f}; "
              f"round wall x{np.median(results['grpc']['walls']) / np.median(results['http']['walls']):.2f}")


if __name__ == "__main__":
    main()
