"""Two trainers in two processes taking turns, one step each, so both see the same machine load.

On a shared machine the load changes by minutes; timing trainer A for five minutes and then
trainer B compares two different machines. Here both children run at once but only the one
holding the baton computes a step: the parent hands it to A, waits for A's step to end, hands it
to B, and so on (who goes first swaps every step). Set-up and tear-down happen outside the
baton, and each child says when it is ready, so no measured step overlaps the other's set-up.

Protocol on two pipes per child: child -> parent `r` (ready, once) and `d` (step done);
parent -> child `g` (go).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import IO


class Baton:
    """The child's side. `acquire` before a step (blocks until the parent says go), `release` after."""

    def __init__(self, spec: str | None) -> None:
        # "<go fd>,<done fd>" from the parent, or None to run alone (every call is then a no-op).
        self._go: IO[bytes] | None = None
        self._done: IO[bytes] | None = None
        if spec:
            go_fd, done_fd = (int(x) for x in spec.split(","))
            self._go, self._done = os.fdopen(go_fd, "rb", 0), os.fdopen(done_fd, "wb", 0)
        self._holding, self._ready_sent = False, False

    @property
    def active(self) -> bool:
        """Run by a parent that hands out turns (False: alone, never waits)."""
        return self._go is not None

    @property
    def holding(self) -> bool:
        """This process's turn now (another thread of it may read this to wait for its turn)."""
        return self._holding

    def acquire(self) -> None:
        if self._go is None or self._done is None or self._holding:
            return
        if not self._ready_sent:
            self._done.write(b"r")
            self._ready_sent = True
        if self._go.read(1) != b"g":
            raise RuntimeError("the benchmark parent went away")
        self._holding = True

    def release(self) -> None:
        if self._done is None:
            return
        if not self._holding:
            # Fail loudly rather than let the parent wait forever for a step it never started.
            raise RuntimeError("a step ended without holding the baton: the step-start hook (acquire) was not called")
        self._done.write(b"d")
        self._holding = False

    def is_set(self) -> bool:
        """Troupe's stop signal, checked once at the top of every step: the step boundary we need."""
        self.acquire()
        return False


def run_lockstep(commands: dict[str, list[str]], steps: int, env: dict[str, str], logs: Path) -> None:
    """Start every command with `--baton GO,DONE` appended and alternate them step by step."""
    children: dict[str, tuple[subprocess.Popen[bytes], IO[bytes], IO[bytes], Path]] = {}
    for name, cmd in commands.items():
        go_read, go_write = os.pipe()
        done_read, done_write = os.pipe()
        log = logs / f"{name}.log"
        with log.open("wb") as log_file:
            proc = subprocess.Popen(
                [*cmd, "--baton", f"{go_read},{done_write}"], env=env, pass_fds=(go_read, done_write), stdout=log_file, stderr=subprocess.STDOUT
            )
        os.close(go_read)
        os.close(done_write)
        children[name] = (proc, os.fdopen(go_write, "wb", 0), os.fdopen(done_read, "rb", 0), log)

    def expect(name: str, byte: bytes) -> None:
        proc, _, done, log = children[name]
        got = done.read(1)
        if got != byte:
            proc.wait()
            tail = log.read_text(errors="replace")[-4000:]
            raise SystemExit(f"{name} stopped early (exit {proc.returncode}), log {log}:\n{tail}")

    names = list(commands)
    for name in names:
        expect(name, b"r")
    for step in range(steps):
        for name in names if step % 2 == 0 else names[::-1]:
            children[name][1].write(b"g")
            expect(name, b"d")
    for name, (proc, go, done, log) in children.items():
        go.close()
        if proc.wait() != 0:
            raise SystemExit(f"{name} failed (exit {proc.returncode}), log {log}:\n{log.read_text(errors='replace')[-4000:]}")
        done.close()
