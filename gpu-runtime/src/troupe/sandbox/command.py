"""The bubblewrap command line of one sandbox, and the uid it runs as.

Layout inside: the system's /usr (and the /bin, /lib... links to it), a few harmless /etc files,
the Python interpreter's own folders (so `python` and its site-packages work), the paths the
caller names, all read-only; a fresh /proc of its own pid namespace, a minimal /dev, a private
size-limited /tmp; nothing else of the host (no /home, /root, /work, /var, /run, other runs).

Who it runs as:
- runtime started as root: bubblewrap sets up the mounts as root (so it can bind an interpreter
  under /root, say), then `setpriv` drops to a uid of its own (SANDBOX_UID_BASE + a slot, unique
  among this process's live sandboxes and across runtime processes on the host), with no
  capabilities, no supplementary groups and no_new_privs. RLIMIT_NPROC counts per uid, so each
  sandbox's process limit is its own.
- runtime started as another user: bubblewrap makes a user namespace in which the code is uid
  65534 (nobody), mapped to the runtime's uid, with further user namespaces disabled.
Both ways a seccomp filter refuses new user namespaces (seccomp.py). Then `prlimit` sets the rlimits (inside, after the uid change, so RLIMIT_NPROC counts only the
sandbox's own processes) and execs the command.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .limits import Limits
from .seccomp import filter_fd

SANDBOX_UID_BASE = 1_000_000_000  # + pid * SLOTS_PER_PROCESS + slot: < 2^32 - 2 for pids < 2^22
SLOTS_PER_PROCESS = 512
NOBODY = 65534

# The only variables user code sees (plus what a caller passes explicitly): no DATABASE_URL,
# REDIS_URL, API keys or tokens of the runner ever reach it.
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    # Threads count against `processes` (RLIMIT_NPROC) and CPU: numeric libraries get one each.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
ETC_FILES = ("/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/ld.so.cache", "/etc/localtime")
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

_slots_lock = threading.Lock()
_slots_in_use: set[int] = set()


def take_uid() -> tuple[int, int]:
    """(uid, slot) for a new sandbox of this process; give the slot back with `release_uid`."""
    with _slots_lock:
        slot = next(s for s in range(SLOTS_PER_PROCESS + 1) if s not in _slots_in_use or s == SLOTS_PER_PROCESS)
        if slot == SLOTS_PER_PROCESS:
            raise RuntimeError(f"more than {SLOTS_PER_PROCESS} live sandboxes in one process")
        _slots_in_use.add(slot)
    return SANDBOX_UID_BASE + (os.getpid() % (1 << 22)) * SLOTS_PER_PROCESS + slot, slot


def release_uid(slot: int | None) -> None:
    if slot is not None:
        with _slots_lock:
            _slots_in_use.discard(slot)


def python_paths() -> list[Path]:
    """Folders this interpreter needs (its prefix, the venv's, the real binary's), outside /usr."""
    real = Path(os.path.realpath(sys.executable)).parent.parent
    found: list[Path] = []
    for p in (Path(sys.base_prefix), Path(sys.prefix), real):
        p = p.resolve()
        if not str(p).startswith("/usr/") and p != Path("/usr") and p not in found:
            found.append(p)
    return found


def python_executable() -> str:
    """This interpreter's path as seen inside a sandbox (normalised: no `..` through unbound folders)."""
    return os.path.abspath(sys.executable)


def child_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = dict(BASE_ENV)
    env.update(extra or {})
    return env


def rlimit_args(limits: Limits) -> list[str]:
    return [
        "prlimit",
        f"--as={limits.memory_mb * 1024 * 1024}",
        f"--cpu={limits.cpu_seconds}",
        f"--nproc={limits.processes}",
        f"--nofile={limits.open_files}",
        f"--fsize={limits.tmp_mb * 1024 * 1024}",
        "--core=0",
        "--",
    ]


def sandbox_argv(
    bwrap: str,
    argv: Sequence[str],
    limits: Limits,
    read_only: Iterable[Path],
    run_dir: Path | None,
    env: Mapping[str, str] | None,
    uid: int | None = None,
    python: bool = True,
) -> tuple[list[str], list[int]]:
    """The full command (bwrap ... setpriv/prlimit ... argv) and the fds it must inherit (the
    seccomp filter's); the caller closes those fds once the process has started."""
    cmd = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
           "--hostname", "sandbox", "--die-with-parent", "--new-session", "--clearenv"]
    as_root = os.geteuid() == 0
    if not as_root:
        cmd += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--disable-userns"]
    for name, value in child_env(env).items():
        cmd += ["--setenv", name, value]

    cmd += ["--ro-bind", "/usr", "/usr"]
    for top in TOP_LINKS:
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    binds: list[Path] = []
    for p in [*(python_paths() if python else []), *read_only, *([run_dir] if run_dir is not None else [])]:
        p = Path(os.path.realpath(p))
        if p not in binds and p != Path("/usr") and Path("/usr") not in p.parents:
            binds.append(p)
    binds.sort(key=lambda p: len(p.parts))
    # /tmp first: a bind below /tmp (a run folder there) must land on the private tmpfs, not under it.
    cmd += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(limits.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    # bwrap creates a bind's missing parents 0700 when it runs as root: make them traversable.
    made: set[Path] = {Path("/"), Path("/usr"), Path("/tmp"), Path("/proc"), Path("/dev"), Path("/etc")}
    cmd += ["--perms", "0755", "--dir", "/etc"]
    for b in binds:
        for parent in reversed(b.parents):
            if parent not in made and not any(parent == x or x in parent.parents for x in binds):
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
    for f in ETC_FILES:
        cmd += ["--ro-bind-try", f, f]
    for b in binds:
        cmd += ["--ro-bind", str(b), str(b)]
    cmd += ["--chdir", str(Path(os.path.realpath(run_dir))) if run_dir is not None else "/tmp"]
    fds = []
    seccomp = filter_fd()
    if seccomp is not None:
        cmd += ["--seccomp", str(seccomp)]
        fds.append(seccomp)
    cmd.append("--")
    if as_root:
        if uid is None:
            raise ValueError("a sandbox started by root needs a uid of its own (take_uid)")
        cmd += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs", "--"]
    return cmd + rlimit_args(limits) + list(argv), fds
