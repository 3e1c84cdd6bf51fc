"""Supervise the ranks of a run on this host: `torch.distributed.run --standalone` under `python -m troupe run`.

The runner (or a person) still starts one process and talks to it as to a one-rank run: events on its
stream, control commands on its channel, SIGTERM to cancel. This module
- writes the filled spec to `<work dir>/ranks/spec.json` and launches torchrun in its own session
  (so its process group can be killed whole: no rank outlives the run);
- relays rank 0's events, appended to `ranks/events.jsonl`, to its own stream as they come, holding
  back only the terminal status until it knows whether another rank failed first;
- forwards pause / resume / stop-after-step to rank 0 through `ranks/control.jsonl`;
- on SIGTERM/SIGINT signals torchrun (which signals every rank: they stop after the step together),
  and kills the group if it is still there after a grace period;
- when a rank failed, reports the rank that failed first with its traceback (from
  `rank-<r>.failure.json`, or torchrun's own output when a rank died without one).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..host.device_choice import run_device_choice
from .distributed import run_ranks
from ..events import TERMINAL_STATES, EventWriter
from ..run import RunResult, exit_code_of
from ..spec.runspec_types import ClusterRay, RunSpec
from .ray_ranks import launch_ray_ranks
from .relay import control_commands, forward_event

GRACE_SECONDS = float(os.environ.get("TROUPE_RANK_GRACE_SECONDS", "60"))
_POLL = 0.05


@dataclass
class Relay:
    """Copies complete lines of rank 0's event file to the supervisor's writer (same seq numbers)."""

    source: Path
    events: EventWriter
    held: list[dict[str, Any]] = field(default_factory=list)  # terminal status, forwarded at the end
    last_step: int = 0
    offset: int = 0
    pending: str = ""

    def pump(self) -> None:
        if not self.source.exists():
            return
        with self.source.open("r", encoding="utf-8") as f:
            f.seek(self.offset)
            chunk = f.read()
            self.offset = f.tell()
        self.pending += chunk
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if not line.strip():
                continue
            event = json.loads(line)
            if event["type"] == "status" and event["state"] in TERMINAL_STATES:
                self.held.append(event)
                continue
            if event["type"] == "metric":
                self.last_step = max(self.last_step, int(event["step"]))
            self.forward(event, line)

    def forward(self, event: dict[str, Any], line: str) -> None:
        forward_event(self.events, event, line)


def _control_forwarder(control: Any, target: Path, done: threading.Event) -> threading.Thread:
    """Appends the supervisor's control commands to rank 0's control file."""

    def run() -> None:
        sent = {"paused": False, "stopping": False}
        with target.open("a", encoding="utf-8", buffering=1) as f:
            while not done.is_set():
                for line in control_commands(control, sent):
                    f.write(line + "\n")
                done.wait(0.1)

    thread = threading.Thread(target=run, name="troupe-control-forward", daemon=True)
    thread.start()
    return thread


def first_failure(rank_dir: Path) -> dict[str, Any] | None:
    found = []
    for path in rank_dir.glob("rank-*.failure.json"):
        try:
            found.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError):
            continue
    # A rank whose peer died fails too ("connection closed"): the earliest failure is the cause.
    return min(found, key=lambda f: f["time"]) if found else None


def torchrun_command(world: int, rank_dir: Path, events_path: Path, control_path: Path, work_dir: Path, seq_start: int, resume: str | None) -> list[str]:
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world}",
        "--max-restarts=0", "--log-dir", str(rank_dir / "torchrun"),
        "-m", "troupe.launch.rank_main", str(rank_dir / "spec.json"),
        "--rank-dir", str(rank_dir), "--events", str(events_path), "--control-file", str(control_path),
        "--work-dir", str(work_dir), "--seq-start", str(seq_start),
    ]
    if resume is not None:
        command += ["--resume", str(resume)]
    return command


def prepare_rank_dir(spec: dict[str, Any], work_dir: Path) -> Path:
    rank_dir = work_dir / "ranks"
    rank_dir.mkdir(parents=True, exist_ok=True)
    for stale in [*rank_dir.glob("rank-*.failure.json"), rank_dir / "events.jsonl", rank_dir / "control.jsonl"]:
        stale.unlink(missing_ok=True)
    (rank_dir / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    return rank_dir


def launch_ranks(spec: dict[str, Any], events: EventWriter, work_dir: Path, stop: Any, control: Any, resume: Any) -> Any:
    """The run's ranks as processes: torchrun here, or Ray for `cluster.kind: "ray"` (read typed). Every rank gets
    the run's document and runs the loop on it."""
    run = RunSpec.from_dict(spec)
    if isinstance(run.cluster, ClusterRay):
        return launch_ray_ranks(spec, run, run.cluster, events, work_dir, stop, control, resume)
    world = run_ranks(spec)
    rank_dir = prepare_rank_dir(spec, work_dir)
    events_path, control_path = rank_dir / "events.jsonl", rank_dir / "control.jsonl"
    control_path.touch()
    env = {
        **os.environ,
        "TROUPE_RANK_CHILD": "1",
        # One thread per rank: two OpenMP pools on shared cores made small ops 10-20x slower (ENVIRONMENT.md).
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "PYTHONUNBUFFERED": "1",
    }
    events.log("info", f"launching {world} ranks (torch.distributed.run, {'NCCL' if run_device_choice(spec) != 'cpu' and _has_cuda() else 'gloo'}); rank 0 reports")
    # Rank 0 numbers its events on from here (after the line above).
    command = torchrun_command(world, rank_dir, events_path, control_path, work_dir.resolve(), events.next_seq, str(resume) if resume is not None else None)
    log_path = rank_dir / "torchrun.log"
    with log_path.open("w", encoding="utf-8") as log:
        # torchrun turns SIGTERM into a graceful stop of every rank (after their step).
        process = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=lambda: die_with_parent(signal.SIGTERM)
        )
    relay = Relay(events_path, events)
    done = threading.Event()
    if control is not None:
        _control_forwarder(control, control_path, done)
    signalled_at: float | None = None
    try:
        while process.poll() is None:
            relay.pump()
            if stop is not None and stop.is_set() and signalled_at is None:
                signalled_at = time.monotonic()
                os.killpg(process.pid, signal.SIGTERM)  # every rank: they agree to stop after the step
            if signalled_at is not None and time.monotonic() - signalled_at > GRACE_SECONDS:
                os.killpg(process.pid, signal.SIGKILL)
            time.sleep(_POLL)
    finally:
        done.set()
        _kill_group(process)
    relay.pump()
    failure = first_failure(rank_dir)
    terminal = relay.held[-1] if relay.held else None
    if failure is not None and (terminal is None or terminal["state"] == "failed") and failure["rank"] != 0:
        message = f"rank {failure['rank']} of {world} failed: {failure['message']}"
        events.error(message, traceback=failure["traceback"])
        events.status("failed", message)
        return RunResult("failed", 1, message, relay.last_step, None, events.events)
    if terminal is not None:
        forward_event(events, terminal)
        events.terminal_written = True
        return RunResult(terminal["state"], exit_code_of(terminal["state"]), terminal.get("message", ""), relay.last_step, None, events.events)
    if stop is not None and stop.is_set():
        message = f"cancelled by {getattr(stop, 'reason', None) or 'a stop request'} (ranks ended before reporting)"
        events.status("cancelled", message)
        return RunResult("cancelled", exit_code_of("cancelled"), message, 0, None, events.events)
    tail = log_path.read_text(encoding="utf-8", errors="replace")[-20_000:]
    message = f"the ranks ended without a final status (torchrun exit code {process.returncode})"
    events.error(message, traceback=tail)
    events.status("failed", message)
    return RunResult("failed", 1, message, 0, None, events.events)


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Linux: this process gets `sig` when its parent dies. torchrun starts each rank in a session of its
    own, so a group kill of the supervisor cannot reach them: the chain supervisor -> torchrun -> ranks
    holds by parent-death signals instead (no rank outlives a killed supervisor)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _kill_group(process: subprocess.Popen[Any]) -> None:
    """No rank outlives the run: whatever is left of the session torchrun started goes."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if process.poll() is None:
        process.wait(timeout=10)
