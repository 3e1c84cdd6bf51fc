"""What one sandbox may use. The names follow issue 17's `sandbox` settings
(`{network, memoryMb, cpuSeconds, processes, outputBytes}`), so a spec's settings map one to one."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping


@dataclass(frozen=True)
class Limits:
    # Address space of each process (RLIMIT_AS), and the sum of the sandbox's memory where a cgroup can
    # be made for it (memory_scope.py); where none can, a sandbox holds at most `processes` x `memory_mb`.
    memory_mb: int = 512
    # CPU time of each process (RLIMIT_CPU, SIGXCPU then SIGKILL).
    cpu_seconds: int = 60
    # Tasks (processes and threads) the sandbox's user may have at once (RLIMIT_NPROC): a fork loop
    # stops with EAGAIN there instead of filling the host.
    processes: int = 64
    # Bytes of stdout + stderr the caller reads; past it the sandbox is killed (`run`) or the
    # current request fails (`SandboxProcess.read_line`). Nothing past it is kept in memory.
    output_bytes: int = 1_000_000
    # Wall-clock time of a whole `Sandbox.run`; long-lived processes take a deadline per read.
    wall_seconds: float = 60.0
    # Size of the private /tmp (a tmpfs: its pages are memory, not counted in memory_mb).
    tmp_mb: int = 64
    open_files: int = 256
    # Only `False` exists: the sandbox has its own network namespace with nothing in it (not even
    # a usable loopback). The field is here so specs can say it and be refused if they ask for more.
    network: bool = False

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_seconds", "processes", "output_bytes", "tmp_mb", "open_files"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"sandbox limit {name} must be a positive integer, got {value!r}")
        if not (isinstance(self.wall_seconds, (int, float)) and math.isfinite(self.wall_seconds) and self.wall_seconds > 0):
            raise ValueError(f"sandbox limit wall_seconds must be a positive number, got {self.wall_seconds!r}")
        if self.network:
            raise ValueError("sandbox network access is not supported: sandboxes have no network")

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None, **defaults: Any) -> "Limits":
        """Limits from a spec's camelCase `sandbox` settings; keys it leaves out take `defaults`,
        then the class defaults."""
        base = cls(**defaults)
        if not settings:
            return base
        names = {"memoryMb": "memory_mb", "cpuSeconds": "cpu_seconds", "processes": "processes",
                 "outputBytes": "output_bytes", "network": "network", "wallSeconds": "wall_seconds", "tmpMb": "tmp_mb"}
        unknown = sorted(set(settings) - set(names))
        if unknown:
            raise ValueError(f"unknown sandbox settings: {', '.join(unknown)}")
        return replace(base, **{names[k]: v for k, v in settings.items()})
