"""One memory limit for a whole sandbox (issue 30): a cgroup per sandbox, so 8 forks of 400 MB in a 512 MB
reward are killed by the kernel instead of holding 3.2 GB. RLIMIT_AS (limits.py) still bounds each process;
the cgroup bounds their sum, and its OOM kills land on the sandbox's biggest process, never the trainer.

Kinds, tried in this order (the first whose probe makes, limits and removes a child cgroup wins):
    cgroup2   memory.max, emptied with cgroup.kill (a unified hierarchy with the memory controller delegated)
    cgroup1   memory.limit_in_bytes (+ memory.memsw.limit_in_bytes where swap is accounted), emptied by SIGKILL
Base folder: TROUPE_SANDBOX_CGROUP (a cgroup the runner made for this run and handed to the run's user), else
this process's own cgroup. Where none can be made (no writable cgroupfs, an unprivileged runtime with no
delegated folder) sandboxes run without one and `scope_status()` says so: the runner publishes it in its
capabilities' sandbox line, with the honest bound (processes x memoryMb).

    scope = MemoryScope.create(limit_bytes)    # None where cgroups cannot be made
    subprocess.Popen(..., preexec_fn=scope.join if scope else None)
    scope.close()                               # kills what is left in it, removes it
"""

from __future__ import annotations

import functools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "TROUPE_SANDBOX_CGROUP"
CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class ScopeBase:
    kind: str  # "cgroup2" or "cgroup1"
    folder: Path


def _own_cgroups() -> dict[str, str]:
    """controller (or "" for the unified hierarchy) -> this process's cgroup path."""
    out: dict[str, str] = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                out[c] = path
    except OSError:
        pass
    return out


def _candidates() -> list[ScopeBase]:
    delegated = os.environ.get(ENV_VAR)
    if delegated:
        folder = Path(delegated)
        kind = "cgroup2" if (folder / "cgroup.controllers").exists() else "cgroup1"
        return [ScopeBase(kind, folder)]
    own = _own_cgroups()
    found: list[ScopeBase] = []
    for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if "" in own and (mount / "cgroup.controllers").exists():
            found.append(ScopeBase("cgroup2", mount / own[""].lstrip("/")))
    if "memory" in own and (CGROUP_ROOT / "memory").is_dir():
        found.append(ScopeBase("cgroup1", CGROUP_ROOT / "memory" / own["memory"].lstrip("/")))
    return found


def _limit_files(kind: str) -> list[str]:
    return ["memory.max", "memory.swap.max"] if kind == "cgroup2" else ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]


def _probe(base: ScopeBase) -> str | None:
    """None when a child cgroup can be made, limited and removed under `base`; else why not."""
    folder = base.folder / f"troupe-probe-{os.getpid()}"
    try:
        folder.mkdir()
    except OSError as e:
        return f"cannot make a cgroup under {base.folder}: {e.strerror}"
    try:
        limit = folder / _limit_files(base.kind)[0]
        if not limit.exists():
            return f"{base.folder} has no memory controller for its children"
        limit.write_text(str(64 * 1024 * 1024))
        return None
    except OSError as e:
        return f"cannot limit memory in a cgroup under {base.folder}: {e.strerror}"
    finally:
        try:
            folder.rmdir()
        except OSError:
            pass


@functools.lru_cache(maxsize=4)
def _usable(delegated: str | None) -> tuple[ScopeBase | None, str]:  # noqa: ARG001 - the cache key
    reasons = []
    for base in _candidates():
        problem = _probe(base)
        if problem is None:
            return base, f"memory: one {base.kind} per sandbox (its sum, under {base.folder})"
        reasons.append(problem)
    why = "; ".join(reasons) or "no cgroup filesystem here"
    return None, f"memory: no cgroup can be made here ({why}), so a sandbox's memory is bounded per process only: up to processes x memoryMb"


def usable_base() -> ScopeBase | None:
    return _usable(os.environ.get(ENV_VAR))[0]


def scope_status() -> str:
    """One line for the capabilities' sandbox detail: how a sandbox's memory is bounded here."""
    return _usable(os.environ.get(ENV_VAR))[1]


def _remove_orphans(base: Path) -> None:
    """Empty sandbox cgroups of runtimes that died without closing them (SIGKILL): removed at our first sandbox."""
    try:
        names = [p.name for p in base.iterdir() if p.name.startswith("troupe-sandbox-")]
    except OSError:
        return
    for name in names:
        try:
            pid = int(name.split("-")[2])
            if pid != os.getpid() and not Path(f"/proc/{pid}").exists():
                (base / name).rmdir()  # fails, harmlessly, while anything is still in it
        except (ValueError, IndexError, OSError):
            continue


class MemoryScope:
    """One sandbox's cgroup. `join` runs in the child between fork and exec (it moves itself in)."""

    _count = 0

    def __init__(self, base: ScopeBase, folder: Path):
        self.base = base
        self.folder = folder
        self._procs = str(folder / "cgroup.procs")

    @classmethod
    def create(cls, limit_bytes: int) -> "MemoryScope | None":
        base = usable_base()
        if base is None:
            return None
        if cls._count == 0:
            _remove_orphans(base.folder)
        cls._count += 1
        folder = base.folder / f"troupe-sandbox-{os.getpid()}-{cls._count}"
        try:
            folder.mkdir()
            for i, name in enumerate(_limit_files(base.kind)):
                path = folder / name
                if i == 0 or path.exists():
                    # v1 wants memsw >= limit, v2's swap.max is on top of memory.max: no swap at all there.
                    path.write_text(str(limit_bytes if base.kind == "cgroup1" or i == 0 else 0))
        except OSError:
            try:
                folder.rmdir()
            except OSError:
                pass
            return None
        return cls(base, folder)

    def join(self) -> None:
        with open(self._procs, "w") as f:
            f.write("0")

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in Path(self._procs).read_text().split()]
        except OSError:
            return []

    def oom_kills(self) -> int:
        """How many processes the kernel killed for the limit (memory.events / memory.oom_control)."""
        name, key = ("memory.events", "oom_kill") if self.base.kind == "cgroup2" else ("memory.oom_control", "oom_kill")
        try:
            for line in (self.folder / name).read_text().splitlines():
                k, _, v = line.partition(" ")
                if k == key:
                    return int(v)
        except (OSError, ValueError):
            pass
        return 0

    def close(self, wait_seconds: float = 5.0) -> None:
        """Kills whatever is left in the cgroup and removes it (a cgroup with zombies waits for their reaping)."""
        deadline = time.monotonic() + wait_seconds
        while True:
            if self.base.kind == "cgroup2" and (self.folder / "cgroup.kill").exists():
                try:
                    (self.folder / "cgroup.kill").write_text("1")
                except OSError:
                    pass
            else:
                for pid in self.pids():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return  # left for the host's cleanup; it holds no process that can run
                time.sleep(0.05)
