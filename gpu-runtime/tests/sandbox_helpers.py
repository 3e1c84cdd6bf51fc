"""Shared by the sandbox tests: folders the sandbox's uid can reach, host-side process checks."""

import os
import shutil
import socket
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def run_folders():
    """(work root, run A, run B) under /tmp, world-readable as a runner makes them (pytest's
    tmp_path is 0700, which the sandbox's unprivileged uid could not read)."""
    root = Path(tempfile.mkdtemp(prefix="troupe-sandbox-"))
    try:
        os.chmod(root, 0o755)
        runs = []
        for name in ("run-a", "run-b"):
            run = root / name
            run.mkdir(mode=0o755)
            (run / "secret.txt").write_text(f"secret of {name}")
            os.chmod(run / "secret.txt", 0o644)
            runs.append(run)
        yield root, runs[0], runs[1]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def marker() -> str:
    """A `sleep` argument no other process on the host has: 7000.<random digits>."""
    return f"7000.{uuid.uuid4().int % 10**12:012d}"


def processes_with(text: str) -> list[int]:
    """Host pids whose command line contains `text`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def wait_until_gone(text: str, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = processes_with(text)
        if not left:
            return []
        time.sleep(0.05)
    return processes_with(text)


def reachable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def listener():
    """A TCP port on 127.0.0.1 that the host can connect to (the positive control for 'no network')."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
