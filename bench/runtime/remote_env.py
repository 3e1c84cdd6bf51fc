"""Remote environments: 1,000 concurrent sessions against one reference server on this host.

    .venv/bin/python bench/runtime/remote_env.py [--sessions 1000] [--turns 3] [--repeats 3]

The server (`python -m troupe.envserver troupe.remote.examples:Countdown`, a separate process) hosts
a trivial environment, so the numbers are the protocol's and the server's cost, not an
environment's. The client is the runtime's own (troupe.remote.client.RemoteClient, aiohttp, the
connection pool the runtime uses). What it times:

- baseline: one session alone, its reset and steps one after another (an idle server);
- load: N sessions at once, as a step of N episodes calls them: every reset together, then
  each turn's N steps together. Per request: the time from sending to its parsed reply
  (time in the client's connection-pool queue included, as an episode waits it).
Prints p50/p90/p99/max per request, the wall time of each round (requests/s), and p50/p99 as
ratios of the baseline's same percentile.
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

from troupe.remote.client import RemoteClient, RemoteFailure
from troupe.remote.protocol import ResetReply, StepReply

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "troupe.envserver", "troupe.remote.examples:Countdown", "--port", str(port), "--session-ttl", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        raise SystemExit(f"the server did not start: {line}")
    return proc


def timed_round(client: RemoteClient, route: str, bodies: list[dict], parse) -> tuple[list[float], float, int]:
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


def episode_rounds(client: RemoteClient, sessions: int, turns: int) -> tuple[list[float], list[float], int]:
    ids = [uuid.uuid4().hex for _ in range(sessions)]
    rounds = [timed_round(client, "reset", [{"session": s, "row": {"start": turns}, "actors": ["a"]} for s in ids], ResetReply.parse)]
    for t in range(turns):
        rounds.append(timed_round(client, "step", [{"session": s, "actor": "a", "text": str(turns - t)} for s in ids], StepReply.parse))
    latencies = [x for lat, _, _ in rounds for x in lat]
    return latencies, [w for _, w, _ in rounds], sum(f for _, _, f in rounds)


def pct(values: list[float]) -> dict[str, float]:
    a = np.array(values) * 1000
    return {"p50": float(np.percentile(a, 50)), "p90": float(np.percentile(a, 90)), "p99": float(np.percentile(a, 99)), "max": float(a.max())}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--connections", type=int, default=256, help="the client's connection pool (the runtime's default)")
    args = parser.parse_args()
    port = free_port()
    server = start_server(port)
    client = RemoteClient(f"http://127.0.0.1:{port}", timeout_s=60, max_connections=args.connections)
    try:
        episode_rounds(client, 50, args.turns)  # warm up
        base: list[float] = []
        for _ in range(args.repeats * 20):
            lat, _, fails = episode_rounds(client, 1, args.turns)
            assert fails == 0
            base.extend(lat)
        load: list[float] = []
        walls: list[float] = []
        failures = 0
        for _ in range(args.repeats):
            lat, w, fails = episode_rounds(client, args.sessions, args.turns)
            load.extend(lat)
            walls.extend(w)
            failures += fails
    finally:
        client.close()
        server.terminate()
        server.wait(10)
    b, l = pct(base), pct(load)
    print(f"host: {os.cpu_count()} CPUs; server: one process (aiohttp); client pool {args.connections} connections")
    print(f"baseline, 1 session ({len(base)} requests):      " + "  ".join(f"{k} {v:.2f} ms" for k, v in b.items()))
    print(f"{args.sessions} concurrent sessions ({len(load)} requests, {failures} failed): " + "  ".join(f"{k} {v:.1f} ms" for k, v in l.items()))
    print(f"round of {args.sessions} requests (reset or one turn): wall p50 {np.median(walls) * 1000:.0f} ms, max {max(walls) * 1000:.0f} ms"
          f" = {args.sessions / np.median(walls):.0f} requests/s")
    print(f"ratios to the baseline (same percentile): p50 x{l['p50'] / b['p50']:.0f}, p99 x{l['p99'] / b['p99']:.0f}")


if __name__ == "__main__":
    main()
